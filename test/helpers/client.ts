/** A small HTTPS client for tests: real TLS to the daemon, trusting its self-signed certificate. */
import https from 'node:https';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  json?: unknown;
}

export class Client {
  private readonly agent: https.Agent;

  constructor(readonly port: number, ca: string | Buffer, readonly token?: string) {
    this.agent = new https.Agent({ ca, keepAlive: true, checkServerIdentity: () => undefined });
  }

  /** Sends one request and reads the whole answer. */
  request(path: string, options: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string | number> = { ...options.headers };
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    if (this.token && headers.authorization === undefined) headers.authorization = `Bearer ${this.token}`;
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: this.port, path, method: options.method ?? 'GET', headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  get(path: string, headers?: Record<string, string>): Promise<Answer> {
    return this.request(path, { headers });
  }

  post(path: string, json: unknown): Promise<Answer> {
    return this.request(path, { method: 'POST', json });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A multipart/form-data body built by hand, so tests control every byte. */
export function multipart(parts: { name: string; value: string | Buffer; filename?: string; type?: string }[], boundary = 'testboundary42'): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
