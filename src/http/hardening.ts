/**
 * What every HTTPS answer and handshake of the API must look like, in one place: the TLS 1.2
 * suites offered and the security headers. TLS 1.0/1.1 need no setting: uSockets sets BoringSSL's
 * minimum to TLS 1.2, and TLS 1.3's suites (AES-GCM, ChaCha20-Poly1305) are all AEAD with
 * ECDHE and cannot be configured in BoringSSL.
 */

/**
 * TLS 1.2 suites: ECDHE key exchange (forward secrecy) with an AEAD cipher only. BoringSSL's
 * default list also offers CBC suites with SHA-1 MACs and static-RSA key exchange.
 */
export const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** HSTS: a browser that reached the box once never tries it over plain HTTP for a year. */
export const HSTS = 'max-age=31536000';

/** Headers the framework writes itself; a handler's value for one of them is not sent twice. */
export const FRAMEWORK_HEADERS: ReadonlySet<string> = new Set(['strict-transport-security', 'x-content-type-options', 'cache-control']);
