/**
 * The backup archive: a gzipped tar whose `manifest.json` names every other file with its
 * SHA-256; `state/` is the state directory (the store as one compacted copy), `config/` the
 * config file, environment file and TLS pair kept outside it. Nothing in it is trusted on
 * restore before every checksum matches.
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const MANIFEST = 'manifest.json';
export const ARCHIVE_FORMAT = 1;

export interface Manifest {
  format: number;
  version: string;
  schema_version: number;
  created_at: string;
  hostname: string;
  state_dir: string;
  /** Relative path -> SHA-256 (hex) of every file but the manifest. */
  files: Record<string, string>;
}

/** SHA-256 of a file (hex). */
export function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Every regular file under `root`, relative, sorted; anything else (links, devices) is reported. */
export function filesUnder(root: string, skip: (relative: string) => boolean = () => false): { files: string[]; others: string[] } {
  const files: string[] = [];
  const others: string[] = [];
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(root, relative))) {
      const rel = relative ? `${relative}/${name}` : name;
      if (skip(rel)) continue;
      const st = lstatSync(path.join(root, rel));
      if (st.isDirectory()) walk(rel);
      else if (st.isFile()) files.push(rel);
      else others.push(rel);
    }
  };
  walk('');
  return { files: files.sort(), others };
}

/** What is wrong with an unpacked archive: missing, extra or changed files. Empty when sound. */
export function verifyUnpacked(root: string, manifest: Manifest): string[] {
  const problems: string[] = [];
  if (manifest.format !== ARCHIVE_FORMAT) problems.push(`archive format ${manifest.format}, this build reads ${ARCHIVE_FORMAT}`);
  const { files, others } = filesUnder(root, (rel) => rel === MANIFEST);
  for (const other of others) problems.push(`${other}: not a regular file`);
  const listed = new Set(Object.keys(manifest.files));
  for (const file of files) if (!listed.has(file)) problems.push(`${file}: not in the manifest`);
  for (const [file, digest] of Object.entries(manifest.files)) {
    if (!files.includes(file)) problems.push(`${file}: missing`);
    else if (sha256(path.join(root, file)) !== digest) problems.push(`${file}: checksum mismatch (damaged or altered)`);
  }
  return problems;
}
