/** Every collection of the store, in one list: the main thread and the brain's worker open the same ones. */
import { AUTH_COLLECTIONS } from './auth/records.js';
import { EVENT_COLLECTIONS } from './events/events.js';
import { USAGE_COLLECTIONS } from './history/store-usage.js';
import { INVENTORY_COLLECTIONS } from './inventory/records.js';
import { REQUEST_COLLECTIONS } from './requests/records.js';
import { SETTINGS_COLLECTIONS } from './settings/settings.js';
import { SYSTEM_COLLECTIONS } from './system/records.js';
import { WORKFLOW_COLLECTIONS } from './workflows/workflows.js';

export const ALL_COLLECTIONS = [
  ...AUTH_COLLECTIONS, ...INVENTORY_COLLECTIONS, ...SETTINGS_COLLECTIONS, ...EVENT_COLLECTIONS, ...WORKFLOW_COLLECTIONS, ...REQUEST_COLLECTIONS, ...SYSTEM_COLLECTIONS, ...USAGE_COLLECTIONS,
] as const;
