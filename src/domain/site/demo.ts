/**
 * The embedded demo site: what `npm start` runs with no configuration. Small enough to
 * watch (two levels, lanes up to 3 deep, about 1,000 carriers), generated rather than
 * stored so it always passes the same validator as any site file.
 */
import { generateSite, type GenerateOptions } from './generate.js';
import type { SiteLayout } from './layout.js';

/** The fixed parameters of the demo; changing them changes every demo installation. */
export const DEMO_OPTIONS: GenerateOptions = {
  name: 'Demo site',
  levels: 2,
  spacesPerLevel: 620,
  balconiesPerLevel: 2,
  chargersPerLevel: 2,
  botsPerLevel: 10,
  carrierFill: 0.72,
  boxesPerCarrier: 2.5,
  skus: 400,
  seed: 20260101,
};

/** A fresh copy of the demo layout (callers may keep or change it). */
export function demoLayout(): SiteLayout {
  return generateSite(DEMO_OPTIONS);
}
