/**
 * A streaming multipart/form-data scanner (RFC 7578, RFC 2046 §5.1.1). It is fed the body in
 * pieces of any size and finds each part's header block and where its data lies in the body,
 * without keeping the data: a 16 MiB upload spooled to disk is parsed in a few KiB of memory,
 * and file parts are later read straight from the spool file by offset.
 */

/** One part: its raw header block, and its data as a byte range of the whole body. */
export interface ScannedPart {
  headers: Buffer;
  /** Offset of the first data byte in the body. */
  start: number;
  /** Offset just after the last data byte. */
  end: number;
}

export interface ScanLimits {
  /** Longest header block of one part. */
  maxHeaderBytes: number;
  /** Most parts in one body. */
  maxParts: number;
}

/** Why a body cannot be taken: `malformed` is the client's syntax error, `too_many_parts` its size. */
export class MultipartScanError extends Error {
  constructor(readonly reason: 'malformed' | 'too_many_parts', message: string) {
    super(message);
  }
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
/** Spaces or tabs a sender may put after a boundary (RFC 2046 "transport padding"), at most. */
const MAX_PADDING = 64;

type State = 'preamble' | 'delimiter' | 'headers' | 'data' | 'done';

export class MultipartScanner {
  readonly parts: ScannedPart[] = [];
  private readonly delimiter: Buffer;
  private state: State = 'preamble';
  // The body is scanned as if preceded by CRLF, so that a boundary on the first line is found
  // like every later one (`\r\n--boundary`).
  private carry: Buffer = CRLF;
  private carryOffset = -CRLF.length;
  private headers: Buffer = Buffer.alloc(0);
  private dataStart = 0;

  constructor(boundary: string, private readonly limits: ScanLimits) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** Scans the next piece of the body; throws MultipartScanError on a syntax error or too many parts. */
  push(chunk: Buffer): void {
    if (this.state === 'done' || chunk.length === 0) return;
    const buf = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const base = this.carryOffset;
    let pos = 0;
    for (;;) {
      if (this.state === 'preamble' || this.state === 'data') {
        const at = buf.indexOf(this.delimiter, pos);
        if (at < 0) {
          // Keep only what could be the beginning of a delimiter cut by the chunk's end.
          pos = Math.max(pos, buf.length - (this.delimiter.length - 1));
          break;
        }
        if (this.state === 'data') this.addPart(base + at);
        pos = at + this.delimiter.length;
        this.state = 'delimiter';
      } else if (this.state === 'delimiter') {
        if (buf.length - pos < 2) break;
        if (buf[pos] === 0x2d && buf[pos + 1] === 0x2d) {
          this.state = 'done';
          this.carry = Buffer.alloc(0);
          return;
        }
        const eol = buf.indexOf(CRLF, pos);
        if (eol < 0) {
          if (buf.length - pos > MAX_PADDING) throw malformed('a boundary line does not end');
          break;
        }
        for (let i = pos; i < eol; i++) if (buf[i] !== 0x20 && buf[i] !== 0x09) throw malformed('text after a boundary on its line');
        pos = eol + 2;
        this.state = 'headers';
      } else if (this.state === 'headers') {
        if (buf.length - pos < 2) break;
        // A part may have no header lines at all: its header block is then the empty line alone.
        if (buf[pos] === 0x0d && buf[pos + 1] === 0x0a) {
          this.headers = Buffer.alloc(0);
          pos += 2;
        } else {
          const end = buf.indexOf(HEADER_END, pos);
          if (end < 0) {
            if (buf.length - pos > this.limits.maxHeaderBytes) throw malformed(`a part's headers are longer than ${this.limits.maxHeaderBytes} bytes`);
            break;
          }
          if (end - pos > this.limits.maxHeaderBytes) throw malformed(`a part's headers are longer than ${this.limits.maxHeaderBytes} bytes`);
          this.headers = Buffer.from(buf.subarray(pos, end));
          pos = end + 4;
        }
        this.dataStart = base + pos;
        this.state = 'data';
      } else {
        return;
      }
    }
    // A copy: the caller may reuse the chunk's memory for its next read.
    this.carry = Buffer.from(buf.subarray(pos));
    this.carryOffset = base + pos;
  }

  /** Ends the body; throws unless its closing boundary was seen. Returns the parts found. */
  end(): ScannedPart[] {
    if (this.state !== 'done') throw malformed(this.state === 'preamble' ? 'no boundary found (check the boundary parameter)' : 'the body ends before its closing boundary');
    return this.parts;
  }

  private addPart(end: number): void {
    if (this.parts.length >= this.limits.maxParts) throw new MultipartScanError('too_many_parts', `more than ${this.limits.maxParts} parts`);
    this.parts.push({ headers: this.headers, start: this.dataStart, end });
  }
}

function malformed(why: string): MultipartScanError {
  return new MultipartScanError('malformed', `Malformed multipart/form-data body: ${why}`);
}
