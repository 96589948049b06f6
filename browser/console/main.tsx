/**
 * The site console (docs/console.md): sign in, then the site view, the status panel and the
 * balcony screens and the KPI page, chosen by the address's #fragment so each can be bookmarked (a balcony's
 * tablet opens #/balcony/2 and stays there).
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, logout, onSignedOut, resume, whoAmI, type Identity } from './api';
import { BalconyScreen } from './balcony';
import { useLoad } from './hooks';
import { KpiPage } from './kpi';
import { Login } from './login';
import { SiteView } from './site';
import { StatusPanel } from './status';
import './console.css';

type Route = { view: 'site'; level?: number } | { view: 'status' } | { view: 'balcony'; id: number } | { view: 'balconies' } | { view: 'kpi' };

function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  const n = Number(parts[1]);
  if (parts[0] === 'status') return { view: 'status' };
  if (parts[0] === 'balcony' && parts[1] !== undefined && Number.isInteger(n)) return { view: 'balcony', id: n };
  if (parts[0] === 'balconies') return { view: 'balconies' };
  if (parts[0] === 'kpi') return { view: 'kpi' };
  return { view: 'site', level: parts[0] === 'site' && Number.isInteger(n) && n > 0 ? n : undefined };
}

function useHash(): [Route, (hash: string) => void] {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return [parse(hash), (h: string) => {
    location.hash = h;
  }];
}

function App() {
  const [me, setMe] = useState<Identity | undefined>(undefined);
  const [checked, setChecked] = useState(false);
  const [route, go] = useHash();

  const signedIn = async () => setMe(await whoAmI());
  useEffect(() => {
    void resume().then(async (ok) => {
      if (ok) await signedIn().catch(() => undefined);
      setChecked(true);
    });
    return onSignedOut(() => setMe(undefined));
  }, []);

  if (!checked) return <p class="loading">Loading…</p>;
  if (!me) return <Login onSignedIn={() => void signedIn()} />;
  // A page the role cannot read is not offered; the daemon refuses its calls anyway.
  const canKpi = me.permissions.includes('kpi:view');
  const link = (hash: string, label: string, active: boolean) => <a href={hash} aria-current={active ? 'page' : undefined}>{label}</a>;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => {
        e.preventDefault();
        document.querySelector<HTMLElement>('main')?.focus();
      }}>Skip to content</a>
      <header>
        <nav aria-label="Views">
          {link('#/site', 'Site', route.view === 'site')}
          {link('#/status', 'Status', route.view === 'status')}
          {link('#/balconies', 'Balconies', route.view === 'balcony' || route.view === 'balconies')}
          {canKpi && link('#/kpi', 'KPIs', route.view === 'kpi')}
        </nav>
        <span class="who" data-testid="who">{me.user.username || me.user.email} · {me.user.role_id}</span>
        <button onClick={() => void logout().then(() => setMe(undefined))}>Log out</button>
      </header>
      {route.view === 'site' && <SiteView level={route.level} go={go} />}
      {route.view === 'status' && <StatusPanel me={me} />}
      {route.view === 'balconies' && <Balconies />}
      {route.view === 'balcony' && <BalconyScreen balcony={route.id} me={me} />}
      {route.view === 'kpi' && (canKpi ? <KpiPage /> : <main id="main" tabIndex={-1}><p class="error" role="alert">The KPI page needs the permission kpi:view, which your role does not have.</p></main>)}
    </>
  );
}

function Balconies() {
  const balconies = useLoad(() => api<{ id: number }[]>('/api/v2/balconies'), []);
  return (
    <main class="balconies" id="main" tabIndex={-1}>
      <h1>Balconies</h1>
      <ul>{(balconies.data ?? []).map((b) => <li><a href={`#/balcony/${b.id}`}>Balcony {b.id}</a></li>)}</ul>
    </main>
  );
}

render(<App />, document.getElementById('app')!);
