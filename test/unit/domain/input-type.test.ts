// What a request was asked as, beside the spec's type: kept from the posted input, and read
// back for requests stored before it was kept. An archive line tags a request with `kind`, so
// the field has a name of its own.
import t from 'tap';
import { inputTypeOf, type RequestRecord } from '../../../src/domain/requests/records.js';

t.test('a request\'s input type: stored, or told from a record stored before it was kept', async (t) => {
  const cases: [string, Pick<RequestRecord, 'type' | 'input_type' | 'level_id'>, string][] = [
    ['a putaway, kept', { type: 'REPLENISHMENT', input_type: 'PUTAWAY', level_id: null }, 'PUTAWAY'],
    ['a replenishment, kept', { type: 'REPLENISHMENT', input_type: 'REPLENISHMENT', level_id: null }, 'REPLENISHMENT'],
    ['a carrier onboarding, kept', { type: 'ONBOARD', input_type: 'CARRIER_ONBOARDING', level_id: 1 }, 'CARRIER_ONBOARDING'],
    ['the brain\'s recovery, kept', { type: 'RESUME', input_type: 'RECOVERY', level_id: 2 }, 'RECOVERY'],
    ['an old recovery: the one RESUME with a level', { type: 'RESUME', level_id: 2 }, 'RECOVERY'],
    ['an old resume', { type: 'RESUME', level_id: null }, 'RESUME'],
    ['an old RFID maintenance', { type: 'RFID_MAINTENANCE', level_id: 1 }, 'RFID_WRITE'],
    ['an old fulfillment', { type: 'FULFILLMENT', level_id: null }, 'FULFILLMENT'],
  ];
  for (const [what, record, type] of cases) t.equal(inputTypeOf(record), type, what);
});
