/** Every collection of the store, in one list: the main thread and the brain's worker open the same ones. */
import { AUTH_COLLECTIONS } from './auth/records.js';
import { EVENT_COLLECTIONS } from './events/events.js';
import { USAGE_COLLECTIONS } from './history/store-usage.js';
import { INVENTORY_COLLECTIONS } from './inventory/records.js';
import { KPI_COLLECTIONS, keepingKpi } from './kpi/keeping.js';
import { REQUEST_COLLECTIONS } from './requests/records.js';
import { SETTINGS_COLLECTIONS } from './settings/settings.js';
import { SYSTEM_COLLECTIONS } from './system/records.js';
import { WORKFLOW_COLLECTIONS } from './workflows/workflows.js';
import type { CollectionDef } from '../store/collection.js';

// Opened first with these definitions, the collections of jobs, requests, bots and events run
// the KPI hooks wherever they are written (store.collection(jobs) returns the one opened here).
export const ALL_COLLECTIONS = [
  ...AUTH_COLLECTIONS, ...INVENTORY_COLLECTIONS, ...SETTINGS_COLLECTIONS, ...EVENT_COLLECTIONS, ...WORKFLOW_COLLECTIONS, ...REQUEST_COLLECTIONS, ...SYSTEM_COLLECTIONS, ...USAGE_COLLECTIONS,
  ...KPI_COLLECTIONS,
].map((def) => keepingKpi(def as never)) as readonly CollectionDef<never>[];
