/**
 * The status panel: storage status, each radio line, open requests by status, the last error
 * events, and the control actions. An action the user's role does not permit stays visible but
 * refuses with the permission it needs, so nobody wonders where the button went.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, type Identity } from './api';
import { confirmAction } from './confirm';
import { usePulse, useLoad } from './hooks';
import type { EventItem } from './live';
import type { Bot, Page } from './model';

const REQUEST_STATUSES = ['CREATED', 'ACCEPTED', 'EXECUTING'];

/** What the control endpoints answer, as far as the message reads it. */
interface Answer {
  id?: string;
  cancelled_count?: number;
  message?: string;
  status?: string;
  details?: string;
  request_ids?: string[];
}

interface Action {
  label: string;
  permission: string;
  question: string;
  run(): Promise<Answer>;
  done(answer: Answer): string;
}

const ACTIONS: Action[] = [
  {
    label: 'Pause', permission: 'requests:system_control', question: 'Pause the site? Bots finish their current move and stop taking work.',
    run: () => api<Answer>('/api/v2/requests', { method: 'POST', body: { type: 'PAUSE' } }), done: (r) => `Pause requested (${r.id}).`,
  },
  {
    label: 'Resume', permission: 'requests:system_control', question: 'Resume the site? Bots take work again.',
    run: () => api<Answer>('/api/v2/requests', { method: 'POST', body: { type: 'RESUME' } }), done: (r) => `Resume requested (${r.id}).`,
  },
  {
    label: 'Cancel all', permission: 'requests:cancel_all', question: 'Cancel every open request? Carriers go back to storage; this cannot be undone.',
    run: () => api<Answer>('/api/v2/requests/cancel_all', { method: 'POST' }), done: (r) => `${r.cancelled_count} request(s) cancelled; ${r.message}`,
  },
  {
    label: 'Restart brain', permission: 'system:restart_brain', question: 'Restart the brain? Dispatch stops for a few seconds and resumes from the stored state.',
    run: () => api<Answer>('/api/v2/restart_brain', { method: 'POST' }), done: (r) => `Brain ${r.status}: ${r.details}`,
  },
  {
    label: 'Charge all', permission: 'system:charge_bots', question: 'Send every bot to charge once its work ends?',
    run: () => api<Answer>('/api/v2/system/charge_all_bots', { method: 'POST', body: {} }), done: (r) => `${r.request_ids?.length ?? 0} charging request(s) created.`,
  },
];

const severityName = (s: number) => (s >= 60 ? 'critical' : s >= 50 ? 'error' : s >= 40 ? 'warning' : 'info');

export function StatusPanel(props: { me: Identity }) {
  const pulse = usePulse(['requests', 'jobs', 'system', 'lines', 'bots'], 500);
  const can = (p: string) => props.me.permissions.includes(p);
  const storage = useLoad(() => api<{ storage_status: string }>('/api/v2/storage_status'), [pulse]);
  const bots = useLoad(() => api<Bot[]>('/api/v2/bots'), [pulse]);
  const counts = useLoad(() => Promise.all(REQUEST_STATUSES.map((s) => api<Page<unknown>>(`/api/v2/requests?status__eq=${s}&size=1`).then((p) => [s, p.total] as const))), [pulse]);
  const errors = useLoad(() => (can('events:view') ? api<Page<EventItem>>('/api/v2/events?severity__gte=50&size=8').then((p) => p.items) : Promise.resolve([])), [pulse]);
  const [message, setMessage] = useState<{ text: string; bad: boolean } | undefined>(undefined);

  const lines = new Map<number, { up: boolean; online: number; total: number }>();
  for (const b of bots.data ?? []) {
    const l = lines.get(b.level_id) ?? { up: true, online: 0, total: 0 };
    l.up &&= b.line_up;
    l.total++;
    if (b.online) l.online++;
    lines.set(b.level_id, l);
  }

  const act = async (a: Action) => {
    if (!can(a.permission)) {
      setMessage({ text: `Refused: ${a.label} needs the permission ${a.permission}, which your role (${props.me.user.role_id || 'none'}) does not have.`, bad: true });
      return;
    }
    if (!(await confirmAction(a.label, a.question, a.label))) return;
    try {
      setMessage({ text: a.done(await a.run()), bad: false });
    } catch (err) {
      setMessage({ text: err instanceof ApiError && err.status === 403 ? `Refused by the controller: ${err.message}` : `${a.label} failed: ${(err as Error).message}`, bad: true });
    }
  };

  return (
    <main class="status" id="main" tabIndex={-1}>
      <h1>Status</h1>
      <div class="cards">
        <section class="card">
          <h2>Storage</h2>
          <p class="big" data-testid="storage-status">{storage.data?.storage_status ?? '…'}</p>
        </section>
        <section class="card">
          <h2>Radio lines</h2>
          <ul>
            {[...lines.entries()].sort(([a], [b]) => a - b).map(([level, l]) => (
              <li><span class={l.up ? 'badge ok' : 'badge bad'}>{l.up ? 'up' : 'down'}</span> Level {level}: {l.online} of {l.total} bots heard</li>
            ))}
            {lines.size === 0 && <li>No radio line runs.</li>}
          </ul>
        </section>
        <section class="card">
          <h2>Open requests</h2>
          <table>
            <tbody>
              {(counts.data ?? []).map(([s, n]) => <tr><th scope="row">{s.toLowerCase()}</th><td data-testid={`requests-${s}`}>{n}</td></tr>)}
            </tbody>
          </table>
        </section>
      </div>
      <section class="card">
        <h2>Controls</h2>
        <div class="controls">
          {ACTIONS.map((a) => (
            <button class={can(a.permission) ? '' : 'refused'} aria-disabled={can(a.permission) ? undefined : 'true'}
              title={can(a.permission) ? undefined : `Needs ${a.permission}`} onClick={() => void act(a)}>{a.label}</button>
          ))}
        </div>
        <p role="status" class={message?.bad ? 'error' : 'ok'} data-testid="control-message">{message?.text ?? ''}</p>
      </section>
      <section class="card">
        <h2>Last errors</h2>
        {!can('events:view') ? <p>Your role cannot read the event log.</p> : (errors.data ?? []).length === 0 ? <p>None.</p> : (
          <ul class="events">
            {(errors.data ?? []).map((e) => (
              <li><span class={`sev sev-${severityName(e.severity)}`}>{severityName(e.severity)}</span> <time>{e.created_at_utc ?? e.created_at}</time> <code>{e.hex_value}</code> {e.description}</li>
            ))}
          </ul>
        )}
      </section>
    </main>
  );
}
