import t from 'tap';
// The store first, as the daemon and the brain's thread load it: the switch must come before msgpackr.
import { Store } from '../../../src/store/store.js';
import { isNativeAccelerationEnabled } from 'msgpackr';

t.test('records decode their strings in JavaScript, never as slices of a record-wide string', async (t) => {
  t.ok(Store, 'the store module is loaded');
  t.equal(isNativeAccelerationEnabled, false, "msgpackr's native string extractor is off");
});
