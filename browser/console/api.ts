/**
 * The console's session with the daemon: login, a quiet refresh before the access token
 * expires (and once more on a 401), logout, and JSON calls with the bearer token. The access
 * token lives in memory only; the refresh token in sessionStorage, so a reload of the tab
 * stays signed in and closing it forgets the session.
 */

const REFRESH_KEY = 'warehouse-console.refresh';
/** Refresh this long before the access token's expiry. */
const EARLY_MS = 60_000;

/** An error answer of the API, with its status and message. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string, readonly body: unknown) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface Identity {
  user: { email: string; id: number; role_id: string; username: string };
  permissions: string[];
}

interface TokenPair {
  access_token: string;
  refresh_token: string;
}

let accessToken: string | undefined;
let refreshing: Promise<boolean> | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
const signedOutListeners = new Set<() => void>();

/** Called when the session ends on its own (refresh refused): the app shows the login again. */
export function onSignedOut(fn: () => void): () => void {
  signedOutListeners.add(fn);
  return () => signedOutListeners.delete(fn);
}

/** The current access token (for WebSockets, which take it in the query). */
export function token(): string | undefined {
  return accessToken;
}

function storedRefresh(): string | null {
  try {
    return sessionStorage.getItem(REFRESH_KEY);
  } catch {
    return null;
  }
}

function keep(pair: TokenPair): void {
  accessToken = pair.access_token;
  try {
    sessionStorage.setItem(REFRESH_KEY, pair.refresh_token);
  } catch {
    // Private mode without storage: the session lasts as long as the page.
  }
  schedule(pair.access_token);
}

function forget(): void {
  accessToken = undefined;
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  try {
    sessionStorage.removeItem(REFRESH_KEY);
  } catch {
    // nothing stored
  }
}

/** Plans the quiet refresh from the token's own `exp`. */
function schedule(jwt: string): void {
  if (timer !== undefined) clearTimeout(timer);
  let exp: number | undefined;
  try {
    const payload = JSON.parse(atob(jwt.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number };
    exp = payload.exp;
  } catch {
    exp = undefined;
  }
  if (exp === undefined) return;
  const wait = Math.max(5_000, exp * 1000 - Date.now() - EARLY_MS);
  timer = setTimeout(() => void refresh(), wait);
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const data = await readBody(res);
  if (!res.ok) throw new ApiError(res.status, messageOf(data, res.status), data);
  return data as T;
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The error body's message: `detail` as a string, or the first validation issue. */
export function messageOf(data: unknown, status: number): string {
  const detail = (data as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail) && detail.length > 0) {
    const d = detail[0] as { loc?: unknown[]; msg?: string };
    return `${(d.loc ?? []).join('.')}: ${d.msg ?? 'invalid'}`;
  }
  return `HTTP ${status}`;
}

/** Logs in with email and password. */
export async function login(email: string, password: string): Promise<void> {
  keep(await post<TokenPair>('/api/v2/auth/login', { email, password }));
}

/** Exchanges the refresh token for a new pair; one exchange at a time. False when the session is over. */
export function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const presented = storedRefresh();
    if (!presented) return false;
    try {
      keep(await post<TokenPair>('/api/v2/auth/refresh_token', { refresh_token: presented }));
      return true;
    } catch (err) {
      // A refused token ends the session; a network failure leaves it for the next try.
      if (err instanceof ApiError && err.status === 401) {
        forget();
        for (const fn of signedOutListeners) fn();
      }
      return false;
    }
  })().finally(() => {
    refreshing = undefined;
  });
  return refreshing;
}

/** On page load: resumes the tab's session if it has one. */
export function resume(): Promise<boolean> {
  return storedRefresh() ? refresh() : Promise.resolve(false);
}

/** Logs out: the daemon revokes the refresh token (POST /api/v2/auth/logout), the tab forgets both. */
export async function logout(): Promise<void> {
  const presented = storedRefresh();
  forget();
  if (presented) await post('/api/v2/auth/logout', { refresh_token: presented }).catch(() => undefined);
}

/** A JSON call with the access token; a 401 refreshes once and tries again. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const headers: Record<string, string> = {};
    if (accessToken) headers.authorization = `Bearer ${accessToken}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
    if (res.status === 401 && attempt === 0 && (await refresh())) continue;
    const data = await readBody(res);
    if (!res.ok) throw new ApiError(res.status, messageOf(data, res.status), data);
    return data as T;
  }
}

/** Who is signed in, with their permissions. */
export function whoAmI(): Promise<Identity> {
  return api<Identity>('/api/v2/auth/authenticate');
}
