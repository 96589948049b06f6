/** The sign-in form: the same users and passwords as the API (POST /api/v2/auth/login). */
import { useState } from 'preact/hooks';
import { ApiError, login } from './api';

export function Login(props: { onSignedIn(): void }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      await login(String(form.get('email')), String(form.get('password')));
      props.onSignedIn();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'Wrong email or password.' : err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>Warehouse console</h1>
      <form onSubmit={submit} aria-describedby={error ? 'login-error' : undefined}>
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required autofocus />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        {error && <p id="login-error" class="error" role="alert">{error}</p>}
      </form>
    </main>
  );
}
