/**
 * Carries commit notices between two threads that share one LMDB environment, over a
 * MessagePort of their own: what one thread commits, the other's Store announces as `remote`
 * once it is durable, so listeners on either side hear every change whoever made it (the API's
 * triggers in the brain, the brain's job moves in the API's inventory view and event stream).
 */
import type { MessagePort } from 'node:worker_threads';
import type { CommitNotice } from './commit-notices.js';
import type { Store } from './store.js';

/** Forwards this thread's commits through `port` and announces the other side's; returns the function that stops both. */
export function bridgeCommits(store: Store, port: MessagePort): () => void {
  const stopSending = store.onCommit((notice, origin) => {
    if (origin === 'local') port.postMessage(notice);
  });
  const onMessage = (notice: CommitNotice) => store.heard(notice);
  port.on('message', onMessage);
  // The port must not keep a thread alive on its own: the brain's lifecycle decides that.
  port.unref();
  return () => {
    stopSending();
    port.off('message', onMessage);
    port.close();
  };
}
