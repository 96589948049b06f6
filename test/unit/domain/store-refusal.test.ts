// What a write the store refused means to the caller: the domain tells conflicts and the disk
// apart from bugs, so the HTTP layer answers without knowing the store's errors.
import t from 'tap';
import { ConflictError, storeRefusal } from '../../../src/domain/errors.js';
import { UniqueIndexError } from '../../../src/store/collection.js';
import { StorageFaultError } from '../../../src/store/storage-fault.js';

t.test('a store refusal: a conflict, the disk, or nothing the store knows', async (t) => {
  const unique = storeRefusal(new UniqueIndexError('users: email a@b.c is taken'));
  t.ok(unique instanceof ConflictError, 'a unique index that holds the value is a conflict');
  t.same(storeRefusal(new StorageFaultError(true, '/var/lib/wc', new Error('MDB_MAP_FULL'))), { disk: 'full', dir: '/var/lib/wc' });
  t.same(storeRefusal(new StorageFaultError(false, '/var/lib/wc', new Error('EIO'))), { disk: 'failing', dir: '/var/lib/wc' });
  t.same(storeRefusal(Object.assign(new Error('write ENOSPC'), { code: 'ENOSPC' })), { disk: 'full', dir: 'the state directory' }, 'a bare ENOSPC is the disk too');
  t.equal(storeRefusal(new Error('a bug')), undefined);
  t.equal(storeRefusal(undefined), undefined);
});
