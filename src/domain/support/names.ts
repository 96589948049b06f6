/**
 * Names in the support outbox: issue keys and stored file names. Both end up as path
 * segments under the state directory, so both are built from a small safe alphabet here and
 * checked against it again wherever they come back from a request.
 */
import { randomInt } from 'node:crypto';

/** Crockford's base32 without I, L, O, U: no letters a person misreads over the phone. */
const KEY_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const KEY_RANDOM_CHARS = 6;

/** Shape of an issue key: `SUP-<yyyymmdd UTC>-<6 random characters>`. */
export const KEY_PATTERN = '^SUP-[0-9]{8}-[0-9A-HJKMNP-TV-Z]{6}$';
const KEY_RE = new RegExp(KEY_PATTERN);

/** Shape of a stored file name; never `.`/`..`, never a hidden file, no separators. */
export const FILE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';
const FILE_NAME_RE = new RegExp(FILE_NAME_PATTERN);

/** Longest stored file name, characters. */
const NAME_MAX = 100;

/** A fresh issue key for the UTC day of `now`. */
export function newKey(now: number): string {
  const day = new Date(now).toISOString().slice(0, 10).replaceAll('-', '');
  let suffix = '';
  for (let i = 0; i < KEY_RANDOM_CHARS; i++) suffix += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return `SUP-${day}-${suffix}`;
}

/** Whether a string is a well-formed issue key (and therefore a safe directory name). */
export function isKey(key: string): boolean {
  return KEY_RE.test(key);
}

/** Whether a string is a name `sanitizeFileName` can produce (and therefore a safe file name). */
export function isFileName(name: string): boolean {
  return FILE_NAME_RE.test(name);
}

/**
 * A safe file name from what a client sent: the last path segment (either separator, as
 * Windows browsers send full paths), other characters replaced by `_`, no leading dot or dash,
 * at most 100 characters keeping the extension.
 */
export function sanitizeFileName(original: string): string {
  const last = original.split(/[/\\]/).pop() ?? '';
  // NFKD then dropping combining marks keeps `café.txt` readable as `cafe.txt`.
  let name = last.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^A-Za-z0-9._-]/g, '_').replace(/_+/g, '_');
  // No leading dot (hidden file, `..`) or dash (read as an option by the shell tools support uses).
  name = name.replace(/^[._-]+/, '');
  if (name === '') name = 'file';
  if (name.length > NAME_MAX) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = name.slice(0, NAME_MAX - ext.length) + ext;
  }
  return name;
}

/** Sanitized names for several files, made unique with `-2`, `-3`… before the extension. */
export function uniqueFileNames(originals: readonly string[]): string[] {
  const taken = new Set<string>();
  return originals.map((original) => {
    const base = sanitizeFileName(original);
    let name = base;
    for (let n = 2; taken.has(name.toLowerCase()); n++) {
      const dot = base.lastIndexOf('.');
      const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, ''];
      name = `${stem.slice(0, NAME_MAX - ext.length - 4)}-${n}${ext}`;
    }
    // Case-insensitive: the files may be copied to a case-insensitive disk for support.
    taken.add(name.toLowerCase());
    return name;
  });
}
