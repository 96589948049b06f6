/**
 * multipart/form-data bodies, spooled to a file by the server and parsed from there: the
 * scanner finds the parts, text fields are read into strings (bounded), file fields stay on
 * disk as byte ranges of the spool file (UploadedFile), and the result is checked against the
 * route's multipart schema.
 */
import { open } from 'node:fs/promises';
import Type, { type TObject, type TSchema } from 'typebox';
import { ValidationError, type ValidationIssue } from '../domain/errors.js';
import { HttpError } from './errors.js';
import { MultipartScanError, MultipartScanner, type ScannedPart } from './multipart-scan.js';
import type { UploadedFile } from './route.js';
import { SpooledFile } from './spooled-file.js';
import { compile, type Validator } from './validation.js';

/** Schema of one uploaded file, for declaring multipart fields. */
export const Binary = (description?: string) => Type.Unsafe<UploadedFile>({ type: 'string', format: 'binary', ...(description ? { description } : {}) });

type FieldKind = 'text' | 'file' | 'files';

/** A multipart schema prepared once: the kind of each field and a validator for the text ones. */
export interface MultipartPlan {
  kinds: Map<string, FieldKind>;
  required: Set<string>;
  text: Validator;
}

export interface MultipartLimits {
  /** All text fields together, bytes (their values are held in memory). */
  maxTextBytes: number;
  maxParts: number;
  maxHeaderBytes: number;
}

/** Bytes read from the spool file at a time. */
const READ_BYTES = 64 * 1024;

/** Prepares a route's multipart schema. */
export function planMultipart(schema: TObject): MultipartPlan {
  const kinds = new Map<string, FieldKind>();
  const textProps: Record<string, TSchema> = {};
  for (const [name, prop] of Object.entries(schema.properties as Record<string, TSchema>)) {
    const p = prop as { format?: string; type?: string; items?: { format?: string } };
    if (p.format === 'binary') kinds.set(name, 'file');
    else if (p.type === 'array' && p.items?.format === 'binary') kinds.set(name, 'files');
    else {
      kinds.set(name, 'text');
      textProps[name] = prop;
    }
  }
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const textRequired = [...required].filter((n) => kinds.get(n) === 'text');
  const textSchema = { type: 'object', properties: textProps, required: textRequired } as unknown as TSchema;
  return { kinds, required, text: compile(textSchema) };
}

/** The boundary parameter of a multipart Content-Type; 400 when missing or not RFC 2046's 1..70 characters. */
export function boundaryOf(contentType: string): string {
  const m = /;\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (boundary === undefined) throw new HttpError('bad_request', 'multipart/form-data needs a boundary parameter of 1 to 70 characters');
  return boundary;
}

/** Parses and checks a spooled multipart body of `size` bytes; throws 400/413/422 with the fields named. */
export async function parseSpooledMultipart(file: string, size: number, boundary: string, plan: MultipartPlan, limits: MultipartLimits): Promise<Record<string, string | UploadedFile | UploadedFile[]>> {
  const handle = await open(file, 'r');
  try {
    const scanner = new MultipartScanner(boundary, limits);
    const block = Buffer.allocUnsafe(READ_BYTES);
    try {
      for (let offset = 0; offset < size;) {
        const { bytesRead } = await handle.read(block, 0, Math.min(READ_BYTES, size - offset), offset);
        if (bytesRead === 0) break;
        scanner.push(block.subarray(0, bytesRead));
        offset += bytesRead;
      }
      scanner.end();
    } catch (err) {
      if (!(err instanceof MultipartScanError)) throw err;
      throw new HttpError(err.reason === 'too_many_parts' ? 'payload_too_large' : 'bad_request', err.message);
    }
    return await collect(scanner.parts, plan, limits, file, async (part) => {
      const bytes = Buffer.allocUnsafe(part.end - part.start);
      await handle.read(bytes, 0, bytes.length, part.start);
      return bytes.toString('utf8');
    });
  } finally {
    await handle.close();
  }
}

/** The form's fields from the scanned parts, checked against the plan. */
async function collect(parts: readonly ScannedPart[], plan: MultipartPlan, limits: MultipartLimits, file: string, readText: (p: ScannedPart) => Promise<string>) {
  const issues: ValidationIssue[] = [];
  const out: Record<string, string | UploadedFile | UploadedFile[]> = {};
  const text: Record<string, string> = {};
  let textBytes = 0;
  for (const part of parts) {
    const { name, filename, type } = partHeaders(part.headers);
    const kind = plan.kinds.get(name);
    if (kind === undefined) {
      issues.push({ loc: ['body', name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      continue;
    }
    if (kind === 'text') {
      if (filename !== undefined) {
        issues.push({ loc: ['body', name], msg: 'Expected a text field, got a file', type: 'string_type' });
        continue;
      }
      textBytes += part.end - part.start;
      if (textBytes > limits.maxTextBytes) throw new HttpError('payload_too_large', `Text fields are larger than the limit of ${limits.maxTextBytes} bytes together`);
      text[name] = out[name] = await readText(part);
      continue;
    }
    const upload = new SpooledFile(filename ?? '', type ?? 'application/octet-stream', file, part.start, part.end - part.start);
    if (kind === 'files') ((out[name] ??= []) as UploadedFile[]).push(upload);
    else if (out[name] !== undefined) issues.push({ loc: ['body', name], msg: 'Only one file is accepted here', type: 'too_long' });
    else out[name] = upload;
  }
  for (const name of plan.required) {
    if (plan.kinds.get(name) !== 'text' && out[name] === undefined) issues.push({ loc: ['body', name], msg: 'Field required', type: 'missing' });
  }
  if (!plan.text.check(text)) issues.push(...plan.text.issues(text, 'body'));
  if (issues.length > 0) throw new ValidationError(issues);
  return out;
}

/** Name, file name and type of a part, from its Content-Disposition and Content-Type. */
function partHeaders(block: Buffer): { name: string; filename?: string; type?: string } {
  let disposition: string | undefined;
  let type: string | undefined;
  for (const line of block.toString('utf8').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const field = line.slice(0, colon).trim().toLowerCase();
    if (field === 'content-disposition') disposition = line.slice(colon + 1);
    else if (field === 'content-type') type = line.slice(colon + 1).trim();
  }
  const params = disposition === undefined ? new Map<string, string>() : dispositionParams(disposition);
  const name = params.get('name');
  if (name === undefined) throw new HttpError('bad_request', 'Malformed multipart/form-data body: a part without a Content-Disposition name');
  return { name, filename: params.get('filename'), ...(type ? { type } : {}) };
}

/**
 * The parameters of `form-data; name="x"; filename="y"`. Quoted values end at the next quote,
 * without backslash escapes: browsers send `"` as %22 (WHATWG) and Windows paths with raw
 * backslashes, which an unescaping parser would corrupt.
 */
function dispositionParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"([^"]*)"|([^;]*))/g;
  for (let m = re.exec(value); m !== null; m = re.exec(value)) {
    const key = m[1]!.toLowerCase();
    if (!params.has(key)) params.set(key, m[2] ?? m[3]!.trim());
  }
  return params;
}
