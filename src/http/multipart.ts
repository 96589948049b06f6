/**
 * multipart/form-data bodies: parsed by uWS (`getParts`), then checked against the route's
 * multipart schema. Text fields become strings; fields declared `format: binary` become
 * UploadedFile (or arrays of them when declared as arrays).
 */
import { getParts } from './uws.js';
import Type, { type TObject, type TSchema } from 'typebox';
import { ValidationError, type ValidationIssue } from '../domain/errors.js';
import { HttpError } from './errors.js';
import type { UploadedFile } from './route.js';
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

/** Parses and checks a multipart body; throws 400/422 with the fields named. */
export function parseMultipart(body: Buffer, contentType: string, plan: MultipartPlan): Record<string, string | UploadedFile | UploadedFile[]> {
  let parts: ReturnType<typeof getParts>;
  try {
    parts = getParts(body, contentType);
  } catch {
    parts = undefined;
  }
  // uWS yields no parts for bytes without the boundary: that is a malformed body, not an empty form.
  if (!parts || (parts.length === 0 && body.length > 0)) throw new HttpError('bad_request', 'Malformed multipart/form-data body (check the boundary)');

  const issues: ValidationIssue[] = [];
  const out: Record<string, string | UploadedFile | UploadedFile[]> = {};
  const text: Record<string, string> = {};
  for (const part of parts) {
    const kind = plan.kinds.get(part.name);
    if (kind === undefined) {
      issues.push({ loc: ['body', part.name], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      continue;
    }
    if (kind === 'text') {
      if (part.filename !== undefined) {
        issues.push({ loc: ['body', part.name], msg: 'Expected a text field, got a file', type: 'string_type' });
        continue;
      }
      text[part.name] = out[part.name] = Buffer.from(part.data).toString('utf8');
      continue;
    }
    const file: UploadedFile = { filename: part.filename ?? '', type: part.type ?? 'application/octet-stream', data: Buffer.from(part.data) };
    if (kind === 'files') ((out[part.name] ??= []) as UploadedFile[]).push(file);
    else if (out[part.name] !== undefined) issues.push({ loc: ['body', part.name], msg: 'Only one file is accepted here', type: 'too_long' });
    else out[part.name] = file;
  }
  for (const name of plan.required) {
    if (plan.kinds.get(name) !== 'text' && out[name] === undefined) issues.push({ loc: ['body', name], msg: 'Field required', type: 'missing' });
  }
  if (!plan.text.check(text)) issues.push(...plan.text.issues(text, 'body'));
  if (issues.length > 0) throw new ValidationError(issues);
  return out;
}
