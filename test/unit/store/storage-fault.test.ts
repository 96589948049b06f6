// The store's fault state: a refused commit that was the disk's doing becomes the store's
// fault; its listeners hear it start, change kind and end, not every refused commit; a full
// disk's fault ends only once the disk has room again.
import t from 'tap';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { FaultState, StorageFaultError } from '../../../src/store/storage-fault.js';
import { fillUp, smallDisk } from '../../helpers/small-disk.js';

const full = () => Object.assign(new Error('No space left on device'), { code: 28 });
const io = () => Object.assign(new Error('Input/output error'), { code: 5 });

t.test('a fault starts with the disk\'s refusal, is heard when it changes kind, and ends with a commit that stands', async (t) => {
  const faults = new FaultState('/tmp');
  const heard: (boolean | undefined)[] = [];
  const stop = faults.onChange((fault) => heard.push(fault?.full));
  const stopFailing = faults.onChange(() => {
    throw new Error('a listener that fails');
  });
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));

  const bug = new TypeError('x is undefined');
  t.equal(faults.refused(bug), bug, 'a refusal that is not the disk\'s is the writes\' error as it is');
  t.equal(faults.current(), undefined);

  const refusal = faults.refused(io());
  t.ok(refusal instanceof StorageFaultError && !refusal.full, 'an I/O error with room left: a disk error');
  t.equal(faults.current(), refusal);
  faults.refused(io());
  t.not(faults.current(), refusal, 'the newest refusal is the fault');
  faults.refused(full());
  t.equal(faults.current()?.full, true);
  faults.stood();
  t.equal(faults.current(), undefined, 'a full disk with room again: over');
  faults.stood();
  t.same(heard, [false, true, undefined], 'heard: the start, the change of kind, the end; not the same kind again');

  await new Promise((resolve) => setImmediate(resolve));
  t.match(warnings, [/^storage fault listener failed: Error: a listener that fails/, /failed/, /failed/], 'one that throws is warned about; the others still hear');

  stop();
  stopFailing();
  faults.refused(io());
  t.same(heard, [false, true, undefined], 'a listener stopped hears nothing more');
});

t.test('a full disk\'s fault outlives a commit that stands until the disk has room', async (t) => {
  const mount = smallDisk(t, '4m');
  if (!mount) return;
  const faults = new FaultState(mount);
  const filler = path.join(mount, 'filler');
  fillUp(filler);
  t.equal((faults.refused(io()) as StorageFaultError).full, true, 'an I/O error on a disk without room is a full disk');
  faults.stood();
  t.equal(faults.current()?.full, true, 'a small commit that fit in free pages does not end it');
  rmSync(filler);
  faults.stood();
  t.equal(faults.current(), undefined, 'the next one after space was freed does');
});
