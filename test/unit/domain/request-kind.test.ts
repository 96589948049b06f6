// What a request was asked as, beside the spec's type: kept from the posted input, and read
// back for requests stored before it was kept.
import t from 'tap';
import { requestKind, type RequestRecord } from '../../../src/domain/requests/records.js';

t.test('a request\'s kind: stored, or told from a record stored before kinds were kept', async (t) => {
  const cases: [string, Pick<RequestRecord, 'type' | 'kind' | 'level_id'>, string][] = [
    ['a putaway, kept', { type: 'REPLENISHMENT', kind: 'PUTAWAY', level_id: null }, 'PUTAWAY'],
    ['a replenishment, kept', { type: 'REPLENISHMENT', kind: 'REPLENISHMENT', level_id: null }, 'REPLENISHMENT'],
    ['a carrier onboarding, kept', { type: 'ONBOARD', kind: 'CARRIER_ONBOARDING', level_id: 1 }, 'CARRIER_ONBOARDING'],
    ['the brain\'s recovery, kept', { type: 'RESUME', kind: 'RECOVERY', level_id: 2 }, 'RECOVERY'],
    ['an old recovery: the one RESUME with a level', { type: 'RESUME', level_id: 2 }, 'RECOVERY'],
    ['an old resume', { type: 'RESUME', level_id: null }, 'RESUME'],
    ['an old RFID maintenance', { type: 'RFID_MAINTENANCE', level_id: 1 }, 'RFID_WRITE'],
    ['an old fulfillment', { type: 'FULFILLMENT', level_id: null }, 'FULFILLMENT'],
  ];
  for (const [what, record, kind] of cases) t.equal(requestKind(record), kind, what);
});
