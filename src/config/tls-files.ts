/**
 * Checks a configured site certificate and key before anything uses them: readable, PEM that
 * parses, a key that belongs to the certificate, a certificate that has not expired. A bad
 * file is a configuration problem (exit 78, the unit does not restart), found at start by the
 * daemon and without starting by `warehouse-controller check-config`. A certificate valid only
 * from a later instant than the box's clock says is not one: clients judge it by their own
 * clocks, and a box whose clock is behind (a flat RTC battery, NTP not yet reached) must still
 * start; the daemon warns instead (`notYetValidWarning`).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The configured certificate or key cannot be used; `problems` says why, one line each. */
export class TlsFilesError extends Error {
  constructor(readonly problems: string[]) {
    super(`the TLS certificate cannot be used:\n  - ${problems.join('\n  - ')}`);
    this.name = 'TlsFilesError';
  }
}

/** Every problem of the pair, one line each (empty: usable). `now` for the validity check. */
export function tlsFileProblems(certFile: string, keyFile: string, now = Date.now()): string[] {
  const problems: string[] = [];
  const read = (file: string, setting: string): Buffer | undefined => {
    try {
      return readFileSync(file);
    } catch (err) {
      problems.push(`${setting}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      return undefined;
    }
  };
  const certPem = read(certFile, 'tls_cert');
  const keyPem = read(keyFile, 'tls_key');
  let cert: X509Certificate | undefined;
  if (certPem) {
    try {
      cert = new X509Certificate(certPem);
    } catch (err) {
      problems.push(`tls_cert: ${certFile} is not a PEM certificate (${(err as Error).message})`);
    }
  }
  let key: ReturnType<typeof createPrivateKey> | undefined;
  if (keyPem) {
    try {
      key = createPrivateKey(keyPem);
    } catch (err) {
      problems.push(`tls_key: ${keyFile} is not a PEM private key (${(err as Error).message})`);
    }
  }
  if (cert && key && !cert.checkPrivateKey(key)) problems.push(`tls_key: ${keyFile} is not the key of the certificate ${certFile}`);
  if (cert && Date.parse(cert.validTo) <= now) problems.push(`tls_cert: ${certFile} expired on ${new Date(cert.validTo).toISOString()}`);
  return problems;
}
