/** The store's sequences that hold the newest creation instant of anything the history pruner removed (the 404s read them). */
export const PRUNED_MARK = { requests: 'pruned_request_created_at', jobs: 'pruned_job_created_at' } as const;
