/**
 * The OpenAPI document exactly as the daemon serves it: starts the app in a fresh state
 * directory on the demo site with the radio links off, reads GET /api/openapi.json, and
 * closes the app again. Used by `npm run lint:openapi` and the fuzzer's tests.
 */
import { startTestApp } from '../test/helpers/app.js';

export async function servedOpenApi(): Promise<Record<string, any>> {
  const a = await startTestApp({ WAREHOUSE_LOG_LEVEL: 'warn' });
  try {
    const r = await a.client.request('/api/openapi.json');
    if (r.status !== 200) throw new Error(`GET /api/openapi.json answered ${r.status}`);
    return r.json as Record<string, any>;
  } finally {
    await a.close();
  }
}
