/**
 * What the system endpoints (spec 4.2, 4.3) may ask of the brain, as an interface, so the HTTP
 * layer never reaches into the brain's workings.
 */

/** Spec 3.3. */
export const STORAGE_STATUSES = ['RUNNING', 'PAUSED', 'STARTING_UP', 'MAINTENANCE', 'ERROR', 'OFF', 'SHUTTING_DOWN'] as const;
export type StorageStatus = (typeof STORAGE_STATUSES)[number];

export interface SystemControl {
  /** The storage status now (spec 3.3). */
  storageStatus(): StorageStatus;
  /** Stops and starts the brain from the stored state. */
  restart(): Promise<void>;
  /** Bots that a charge-all would send to charge. */
  chargeAllCandidates(force: boolean): Promise<number[]>;
}
