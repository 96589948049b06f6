/**
 * Section codes (spec 2.10): which sections of a carrier a box takes. A carrier has 32
 * sections, numbered 0..31 from its left edge; the canonical code is a 32-bit integer whose
 * bit (31 - i) is section i, so the code written as 32 binary digits reads left to right.
 * Older integrations speak 8 sections (each 4 canonical ones) or 16 (each 2). The canonical
 * code is the truth; the legacy 8-bit code is derived from it (a legacy section is taken when
 * any of its four canonical sections is).
 */
import { ValidationError } from '../errors.js';

export const SECTIONS = 32;
const LEGACY_SECTIONS = 8;

/** Input of every endpoint that takes a section code: binary digits, or the legacy integer. */
export type SectionCodeInput = string | number;

/**
 * A box's code as a body gives it: `section_code` in either form a box or an inventory row
 * shows it, or `section_code_32` as both show it, so whatever a client read it can send back.
 */
export interface GivenSectionCode {
  section_code?: SectionCodeInput;
  section_code_32?: number;
}

const BINARY = /^[01]+$/;

/**
 * The canonical 32-bit code of an input. A string is a binary numeral of at most 8 digits
 * (legacy; shorter strings are left-padded), or exactly 16 or 32 digits; an integer is the
 * legacy 8-bit value (0..255). A code that takes no section is refused.
 */
export function parseSectionCode(input: SectionCodeInput, loc: (string | number)[] = ['body', 'section_code']): number {
  let code: number;
  if (typeof input === 'number') {
    if (!Number.isInteger(input) || input < 0 || input > 255) {
      throw ValidationError.of(loc, 'an integer section code is the legacy 8-bit value: 0 to 255', 'value_error.section_code');
    }
    code = widen(input, LEGACY_SECTIONS);
  } else {
    if (!BINARY.test(input)) throw ValidationError.of(loc, 'a section code string holds only the digits 0 and 1', 'value_error.section_code');
    const n = input.length;
    if (n <= LEGACY_SECTIONS) code = widen(parseInt(input, 2), LEGACY_SECTIONS);
    else if (n === 16) code = widen(parseInt(input, 2), 16);
    else if (n === SECTIONS) code = parseInt(input, 2) >>> 0;
    else throw ValidationError.of(loc, `a section code string has at most 8, exactly 16 or exactly 32 digits, not ${n}`, 'value_error.section_code');
  }
  if (code === 0) throw ValidationError.of(loc, 'a section code must take at least one section', 'value_error.section_code');
  return code;
}

/** The canonical code of a body's `section_code` or `section_code_32` (exactly one of them). */
export function parseGivenCode(given: GivenSectionCode, loc: (string | number)[] = ['body']): number {
  const { section_code: legacy, section_code_32: code32 } = given;
  if ((legacy === undefined) === (code32 === undefined)) {
    throw ValidationError.of(loc, 'give exactly one of section_code and section_code_32', 'value_error.section_code');
  }
  if (legacy !== undefined) return parseSectionCode(legacy, [...loc, 'section_code']);
  if (!Number.isInteger(code32) || code32! < 1 || code32! > 0xffffffff) {
    throw ValidationError.of([...loc, 'section_code_32'], 'section_code_32 is the canonical 32-bit code: 1 to 4294967295', 'value_error.section_code');
  }
  return code32! >>> 0;
}

/** Expands a code over `sections` sections to 32, each section to 32/sections canonical bits. */
function widen(value: number, sections: number): number {
  const span = SECTIONS / sections;
  const fill = 2 ** span - 1;
  let code = 0;
  for (let i = 0; i < sections; i++) {
    if ((value >>> (sections - 1 - i)) & 1) code += fill * 2 ** (SECTIONS - span * (i + 1));
  }
  return code >>> 0;
}

/** The legacy 8-bit code of a canonical code. */
export function legacyCode(code32: number): number {
  let legacy = 0;
  for (let i = 0; i < LEGACY_SECTIONS; i++) {
    if ((code32 >>> (SECTIONS - 4 * (i + 1))) & 0xf) legacy |= 1 << (LEGACY_SECTIONS - 1 - i);
  }
  return legacy;
}

/** The code as binary digits: 8 for the legacy code, 32 for the canonical one. */
export function codeDigits(code: number, width: 8 | 32): string {
  return code.toString(2).padStart(width, '0');
}

/** Number of sections a code takes. */
export function sectionCount(code32: number): number {
  let v = code32 >>> 0;
  let n = 0;
  while (v !== 0) {
    v &= v - 1;
    n++;
  }
  return n;
}

/** Whether two codes share a section. */
export function overlaps(a: number, b: number): boolean {
  return ((a & b) >>> 0) !== 0;
}

/** The box size as a fraction of its carrier (sections / 32). */
export function boxSize(code32: number): number {
  return sectionCount(code32) / SECTIONS;
}

/**
 * The box size as a reduced fraction of a carrier ("1/4", "3/32", "1"): the key of an SKU's
 * `allowed_box_size_capacities`.
 */
export function boxSizeKey(code32: number): string {
  const n = sectionCount(code32);
  let d = SECTIONS;
  let g = gcd(n, d);
  if (g === 0) g = 1;
  const num = n / g;
  d /= g;
  return d === 1 ? String(num) : `${num}/${d}`;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
