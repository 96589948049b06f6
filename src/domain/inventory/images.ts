/**
 * SKU images on the box's disk, under `<state dir>/sku-images/`. The type comes from the
 * file's first bytes, never from what the client claims. A file is written under a fresh
 * name, synced and renamed into place before the store records it, so a record never names
 * a half-written file; the file a record stops naming is removed after the commit. Images
 * are copied from wherever the upload is kept (its spool file), never held whole in memory.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { DomainError, ValidationError } from '../errors.js';
import { writeNewFileFrom, type IncomingBytes } from '../incoming.js';
import type { SkuImage } from './records.js';

/** Largest image accepted, bytes. */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;

const SIGNATURES: { type: string; ext: string; test(b: Buffer): boolean }[] = [
  { type: 'image/png', ext: 'png', test: (b) => b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { type: 'image/jpeg', ext: 'jpg', test: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', ext: 'gif', test: (b) => b.length >= 6 && /^GIF8[79]a$/.test(b.subarray(0, 6).toString('latin1')) },
  { type: 'image/webp', ext: 'webp', test: (b) => b.length >= 12 && b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
];

/** The image type of some bytes, or undefined when they are not a PNG, JPEG, GIF or WebP. */
export function imageType(bytes: Buffer): { type: string; ext: string } | undefined {
  const sig = SIGNATURES.find((s) => s.test(bytes));
  return sig && { type: sig.type, ext: sig.ext };
}

export class SkuImages {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = path.join(stateDir, 'sku-images');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Checks and durably writes an image; the caller records it, or calls `discard` on failure. */
  async write(source: IncomingBytes): Promise<SkuImage> {
    if (source.size > IMAGE_MAX_BYTES) {
      throw new DomainError('payload_too_large', `the image has ${source.size} bytes; at most ${IMAGE_MAX_BYTES} are accepted`);
    }
    const kind = imageType(await source.head(12));
    if (!kind) throw ValidationError.of(['body', 'picture'], 'the file is not a PNG, JPEG, GIF or WebP image', 'value_error.image_type');
    const file = `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}.${kind.ext}`;
    const tmp = path.join(this.dir, `.${file}.tmp`);
    try {
      await writeNewFileFrom(tmp, source.stream(), 0o600);
      await rename(tmp, path.join(this.dir, file));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return { file, type: kind.type, bytes: source.size };
  }

  /** The bytes of a stored image. */
  read(image: SkuImage): Buffer {
    return readFileSync(path.join(this.dir, path.basename(image.file)));
  }

  /** Removes a file no record names (a replaced image, or one whose record was refused). */
  discard(image: SkuImage | null): void {
    if (image) rmSync(path.join(this.dir, path.basename(image.file)), { force: true });
  }
}
