/**
 * The TLS certificate of the listener: the configured site certificate, or a self-signed one
 * made on first start and kept in the state directory (key readable by the daemon only).
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** SHA-256 fingerprint, for the log and for pinning by clients. */
  fingerprint256: string;
  selfSigned: boolean;
  created: boolean;
}

/** Returns the certificate files to use, creating a self-signed pair when none is configured. */
export async function ensureCertificate(stateDir: string, certFile?: string, keyFile?: string): Promise<TlsFiles> {
  if (certFile && keyFile) {
    const cert = readPem(certFile, 'WAREHOUSE_TLS_CERT');
    readPem(keyFile, 'WAREHOUSE_TLS_KEY');
    return { certFile, keyFile, fingerprint256: new X509Certificate(cert).fingerprint256, selfSigned: false, created: false };
  }
  const dir = path.join(stateDir, 'tls');
  const cert = path.join(dir, 'self-signed-cert.pem');
  const key = path.join(dir, 'self-signed-key.pem');
  let created = false;
  if (!existsSync(cert) || !existsSync(key)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const notBefore = new Date();
    const notAfter = new Date(notBefore);
    notAfter.setFullYear(notAfter.getFullYear() + 10);
    const host = hostname();
    const pems = await selfsigned.generate([{ name: 'commonName', value: host }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate: notBefore,
      notAfterDate: notAfter,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [{ type: 2, value: host }, { type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
      ],
    });
    // Key first, with its mode set at creation: it is never readable by others, not even briefly.
    writeFileSync(key, pems.private, { mode: 0o600 });
    writeFileSync(cert, pems.cert, { mode: 0o644 });
    created = true;
  }
  return { certFile: cert, keyFile: key, fingerprint256: new X509Certificate(readFileSync(cert)).fingerprint256, selfSigned: true, created };
}

function readPem(file: string, setting: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new Error(`${setting}: cannot read ${file}: ${(err as Error).message}`);
  }
}
