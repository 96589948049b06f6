// Section codes: the accepted inputs, the canonical code, the derived legacy code and sizes.
import t from 'tap';
import fc from 'fast-check';
import { ValidationError } from '../../../src/domain/errors.js';
import { boxSize, boxSizeKey, codeDigits, legacyCode, overlaps, parseSectionCode, sectionCount } from '../../../src/domain/inventory/section-code.js';

t.test('inputs map to the canonical 32-bit code', async (t) => {
  t.equal(parseSectionCode('11110000'), 0xffff0000, 'legacy string: each section is 4 canonical ones');
  t.equal(parseSectionCode('1'), 0x0000000f, 'short strings are binary numerals, left-padded');
  t.equal(parseSectionCode(0b10000001), 0xf000000f, 'integer: the legacy 8-bit value');
  t.equal(parseSectionCode('1000000000000001'), 0xc0000003, '16 digits: each section is 2 canonical ones');
  t.equal(parseSectionCode('1'.repeat(32)), 0xffffffff);
  t.equal(parseSectionCode(`1${'0'.repeat(31)}`), 0x80000000, 'section 0 is the leftmost digit');
});

t.test('bad codes are refused with the validation body', async (t) => {
  for (const bad of ['1'.repeat(9), '1'.repeat(15), '1'.repeat(17), '1'.repeat(31), '1'.repeat(33), '10201', 'abc', '', ' 1', '00000000', 0, -1, 256, 1.5]) {
    t.throws(() => parseSectionCode(bad as string | number), ValidationError, JSON.stringify(bad));
  }
  try {
    parseSectionCode('1'.repeat(9), ['body', 'updates', 2, 'section_code']);
  } catch (err) {
    t.same((err as ValidationError).issues[0]!.loc, ['body', 'updates', 2, 'section_code'], 'the location is named');
  }
});

t.test('legacy code, sizes and overlap', async (t) => {
  t.equal(legacyCode(0xffff0000), 0b11110000);
  t.equal(legacyCode(0x00000001), 0b00000001, 'a legacy section is taken when any of its canonical ones is');
  t.equal(codeDigits(legacyCode(0x000fff00), 8), '00011100');
  t.equal(sectionCount(0xffffffff), 32);
  t.equal(boxSize(0xff000000), 0.25);
  t.equal(boxSizeKey(0xff000000), '1/4');
  t.equal(boxSizeKey(0xffffffff), '1');
  t.equal(boxSizeKey(0x00000007), '3/32');
  t.ok(overlaps(0x80000000, 0xffffffff));
  t.notOk(overlaps(0xf0000000, 0x0f000000));
});

t.test('every legacy code survives the round trip through the canonical code', async () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 255 }), (legacy) => {
    const code = parseSectionCode(legacy);
    return legacyCode(code) === legacy && parseSectionCode(codeDigits(legacy, 8)) === code && sectionCount(code) === 4 * sectionCount(legacy);
  }));
  fc.assert(fc.property(fc.integer({ min: 1, max: 0xffffffff }), (code) => parseSectionCode(codeDigits(code, 32)) === code));
});
