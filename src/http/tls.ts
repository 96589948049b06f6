/**
 * The TLS certificate of the listener: the configured site certificate, or a self-signed one
 * made on first start and kept in the state directory (key readable by the daemon only).
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';
import { tlsFileProblems, TlsFilesError } from '../config/tls-files.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** SHA-256 fingerprint, for the log and for pinning by clients. */
  fingerprint256: string;
  /** When the certificate starts and stops being valid (epoch ms). */
  validFrom: number;
  validTo: number;
  selfSigned: boolean;
  created: boolean;
}

const BACKDATE_MS = 7 * 24 * 3600_000;

/**
 * Returns the certificate files to use, creating a self-signed pair when none is configured; a
 * configured pair that cannot be used throws TlsFilesError with every problem.
 */
export async function ensureCertificate(stateDir: string, certFile?: string, keyFile?: string): Promise<TlsFiles> {
  if (certFile && keyFile) return { ...readCertificate(certFile, keyFile), selfSigned: false, created: false };
  const { cert, key } = selfSignedFiles(stateDir);
  const dir = path.dirname(cert);
  let created = false;
  if (!existsSync(cert) || !existsSync(key)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Valid from a week back: made on a first start whose clock is still ahead (a wrong hardware
    // clock NTP has yet to set right), it must not be "not yet valid" to clients once it is.
    const notBefore = new Date(Date.now() - BACKDATE_MS);
    const notAfter = new Date();
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
  return { certFile: cert, keyFile: key, ...identity(readFileSync(cert)), selfSigned: true, created };
}

/** Where the self-signed pair of a state directory is kept. */
export function selfSignedFiles(stateDir: string): { cert: string; key: string } {
  const dir = path.join(stateDir, 'tls');
  return { cert: path.join(dir, 'self-signed-cert.pem'), key: path.join(dir, 'self-signed-key.pem') };
}

/** Checks a certificate pair as it is on disk now and returns its identity, or throws TlsFilesError. */
export function readCertificate(certFile: string, keyFile: string): Pick<TlsFiles, 'certFile' | 'keyFile' | 'fingerprint256' | 'validFrom' | 'validTo'> {
  const problems = tlsFileProblems(certFile, keyFile);
  if (problems.length > 0) throw new TlsFilesError(problems);
  return { certFile, keyFile, ...identity(readFileSync(certFile)) };
}

/** How long before its end a certificate is announced as expiring. */
export const EXPIRY_NOTICE_MS = 30 * 24 * 3600_000;

/** The warning for a certificate that ends within EXPIRY_NOTICE_MS of `now`, if it does. */
export function expiryWarning(certFile: string, validTo: number, now: number): string | undefined {
  if (validTo - now > EXPIRY_NOTICE_MS) return undefined;
  const days = Math.max(0, Math.floor((validTo - now) / (24 * 3600_000)));
  return `the TLS certificate ${certFile} expires on ${new Date(validTo).toISOString()} (in ${days} day${days === 1 ? '' : 's'}): install a renewed one and send SIGHUP (systemctl reload warehouse-controller)`;
}

/**
 * The warning for a certificate valid only from after `now`, if it is: the box's clock is
 * probably behind (clients, whose clocks decide, may well accept it).
 */
export function notYetValidWarning(certFile: string, validFrom: number, now: number): string | undefined {
  if (validFrom <= now) return undefined;
  return `the TLS certificate ${certFile} is valid only from ${new Date(validFrom).toISOString()}, and this box's clock says ${new Date(now).toISOString()}: `
    + 'if the certificate is right, the clock is behind (check `timedatectl`: NTP synchronised?); clients judge the certificate by their own clocks';
}

function identity(pem: Buffer): { fingerprint256: string; validFrom: number; validTo: number } {
  const cert = new X509Certificate(pem);
  return { fingerprint256: cert.fingerprint256, validFrom: Date.parse(cert.validFrom), validTo: Date.parse(cert.validTo) };
}
