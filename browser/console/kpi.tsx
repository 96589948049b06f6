/**
 * The KPI page: what the site did today, yesterday or over the last 7 days, from
 * GET /api/v2/kpi (kept by the daemon as it happens): throughput, balcony busy share, bot
 * availability and lead times by hour, a table per balcony and one per bot (GET /kpi/bots), and
 * the same figures as CSV.
 * Days begin at midnight in the site's timezone, which the API names.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from './api';
import { useLoad } from './hooks';
import {
  balconyTable, botAvailability, botsCsv, botTable, kpiCsv, kpiSeries, percent, periodRange, PERIODS, type KpiAnswer, type KpiBotsAnswer, type Period,
} from './kpi-series';
import { LINE_COLOURS, TimePlot } from './plot';

/** The site's timezone, once an answer named it: it does not change while the daemon runs. */
let siteZone: string | undefined;

const HOUR_MS = 3_600_000;

async function loadPeriod(period: Period): Promise<{ kpi: KpiAnswer; bots: KpiBotsAnswer }> {
  if (siteZone === undefined) {
    // The period's bounds need the zone: ask for the smallest answer that names it.
    const to = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
    const first = await api<KpiAnswer>(`/api/v2/kpi?from=${encodeURIComponent(new Date(to.getTime() - HOUR_MS).toISOString())}&to=${encodeURIComponent(to.toISOString())}`);
    siteZone = first.timezone;
  }
  const range = periodRange(period, Date.now(), siteZone);
  const window = `from=${encodeURIComponent(range.from)}&to=${encodeURIComponent(range.to)}`;
  const [kpi, bots] = await Promise.all([api<KpiAnswer>(`/api/v2/kpi?${window}`), api<KpiBotsAnswer>(`/api/v2/kpi/bots?${window}`)]);
  return { kpi, bots };
}

/** An instant in the site's time, on the 24-hour clock. */
const siteTime = (iso: string, timeZone: string) => new Date(iso).toLocaleString(undefined, { timeZone, dateStyle: 'medium', timeStyle: 'short', hourCycle: 'h23' });
const share = (v: number) => `${Math.round(v * 100)} %`;
const count = (v: number) => String(Math.round(v * 10) / 10);
const duration = (v: number) => (v >= 7200 ? `${(v / 3600).toFixed(1)} h` : v >= 120 ? `${(v / 60).toFixed(v >= 600 ? 0 : 1)} min` : `${Math.round(v)} s`);

/** The KPI page, for a role with kpi:view. */
export function KpiPage() {
  const [period, setPeriod] = useState<Period>('today');
  const [minute, setMinute] = useState(0);
  // The figures of the hour under way grow: read them again every minute.
  useEffect(() => {
    const id = setInterval(() => setMinute((v) => v + 1), 60_000);
    return () => clearInterval(id);
  }, []);
  const answer = useLoad(() => loadPeriod(period), [period, minute]);
  const a = answer.data?.kpi;
  const botAnswer = answer.data?.bots;
  const series = useMemo(() => (a ? kpiSeries(a) : undefined), [a]);
  const table = useMemo(() => (a ? balconyTable(a) : []), [a]);
  const bots = useMemo(() => (botAnswer ? botTable(botAnswer) : []), [botAnswer]);
  const csvUrl = useBlobUrl(useMemo(() => (a ? kpiCsv(a) : undefined), [a]));
  const botsCsvUrl = useBlobUrl(useMemo(() => (botAnswer ? botsCsv(botAnswer) : undefined), [botAnswer]));

  const lines = useMemo(() => series && {
    throughput: [
      { label: 'carriers presented', colour: LINE_COLOURS[0]!, values: series.carriersPresented },
      { label: 'pieces picked', colour: LINE_COLOURS[1]!, values: series.piecesPicked },
    ],
    busy: series.balconyIds.map((id, i) => ({ label: `balcony ${id}`, colour: LINE_COLOURS[i % LINE_COLOURS.length]!, values: series.busyShare[i]! })),
    bots: [{ label: 'available', colour: LINE_COLOURS[2]!, values: series.botAvailability }],
    lead: [
      { label: 'p50', colour: LINE_COLOURS[0]!, values: series.leadTimeP50 },
      { label: 'p95', colour: LINE_COLOURS[3]!, values: series.leadTimeP95 },
    ],
  }, [series]);

  const totals = a && {
    carriers: table.reduce((n, r) => n + r.carriers_presented, 0),
    pieces: table.reduce((n, r) => n + r.pieces_picked, 0),
    bots: botAvailability(a.bots.hours.reduce((t, h) => ({
      working_seconds: t.working_seconds + h.working_seconds, charging_seconds: t.charging_seconds + h.charging_seconds, faulted_seconds: t.faulted_seconds + h.faulted_seconds,
      offline_seconds: t.offline_seconds + h.offline_seconds, idle_seconds: t.idle_seconds + h.idle_seconds,
    }), { working_seconds: 0, charging_seconds: 0, faulted_seconds: 0, offline_seconds: 0, idle_seconds: 0 })),
  };
  const fileName = (what: string) => `${what}-${period}-${a ? a.from.slice(0, 13) : ''}h.csv`;

  return (
    <main class="kpi" id="main" tabIndex={-1}>
      <div class="toolbar">
        <h1>What the site did</h1>
        <div role="group" aria-label="Period" class="periods">
          {PERIODS.map((p) => <button aria-pressed={p.id === period} onClick={() => setPeriod(p.id)}>{p.label}</button>)}
        </div>
        {csvUrl && <a class="button-link" href={csvUrl} download={fileName('kpi')} data-testid="csv">Download CSV</a>}
        {botsCsvUrl && <a class="button-link" href={botsCsvUrl} download={fileName('kpi-bots')} data-testid="bots-csv">Bots CSV</a>}
      </div>
      {answer.error && <p class="error" role="alert">{answer.error}</p>}
      {a && <p class="small" data-testid="kpi-range">{siteTime(a.from, a.timezone)} to {siteTime(a.to, a.timezone)} ({a.timezone}); figures of {siteTime(a.generated_at, a.timezone)}</p>}
      {a && totals && (
        <div class="cards">
          <section class="card"><h2>Carriers presented</h2><p class="big" data-testid="total-carriers">{totals.carriers}</p></section>
          <section class="card"><h2>Pieces picked</h2><p class="big" data-testid="total-pieces">{totals.pieces}</p></section>
          <section class="card"><h2>Requests done</h2><p class="big" data-testid="requests-done">{a.requests.done}</p>
            <p class="small">lead time p50 {a.requests.lead_time_p50_seconds === null ? '—' : duration(a.requests.lead_time_p50_seconds)}, p95 {a.requests.lead_time_p95_seconds === null ? '—' : duration(a.requests.lead_time_p95_seconds)}</p></section>
          <section class="card"><h2>Bot availability</h2><p class="big" data-testid="bot-availability">{totals.bots === null ? '—' : `${percent(totals.bots)} %`}</p><p class="small">{a.bots.count} bots; time not faulted or offline</p></section>
        </div>
      )}
      {a && series && lines && (
        <div class="plots">
          <TimePlot testid="plot-throughput" title="Throughput per hour" x={series.x} lines={lines.throughput} timeZone={a.timezone} format={count} />
          <TimePlot testid="plot-busy" title="Balcony busy share" x={series.x} lines={lines.busy} timeZone={a.timezone} format={share} range={[0, 1]} />
          <TimePlot testid="plot-bots" title="Bot availability" x={series.x} lines={lines.bots} timeZone={a.timezone} format={share} range={[0, 1]} />
          <TimePlot testid="plot-lead" title="Request lead time" x={series.x} lines={lines.lead} timeZone={a.timezone} format={duration} />
        </div>
      )}
      {a && (
        <section class="card">
          <h2 id="balcony-table-title">Balconies</h2>
          <table data-testid="balcony-table" aria-labelledby="balcony-table-title">
            <thead><tr><th scope="col">Balcony</th><th scope="col">Carriers presented</th><th scope="col">Order lines</th><th scope="col">Pieces</th><th scope="col">Busy share</th></tr></thead>
            <tbody>
              {table.map((r) => (
                <tr key={r.balcony_id} data-testid="balcony-row">
                  <th scope="row">{r.balcony_id}</th><td>{r.carriers_presented}</td><td>{r.order_lines_picked}</td><td>{r.pieces_picked}</td>
                  <td>{r.busy_share === null ? '—' : `${percent(r.busy_share)} %`}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {a.errors.by_code.length > 0 && <p class="small" data-testid="error-codes">Errors: {a.errors.by_code.map((e) => `${e.code} × ${e.count}`).join(', ')}</p>}
        </section>
      )}
      {a && (
        <details class="card bots-table">
          <summary><h2>Bots ({bots.length}), the least available first</h2></summary>
          <table data-testid="bot-table">
            <thead><tr><th scope="col">Bot</th><th scope="col">Available</th><th scope="col">Working</th><th scope="col">Charging</th><th scope="col">Faulted</th><th scope="col">Offline</th><th scope="col">Idle</th></tr></thead>
            <tbody>
              {bots.map((b) => (
                <tr key={b.bot_id} data-testid="bot-row">
                  <th scope="row">{b.bot_id}</th><td>{b.availability === null ? '—' : `${percent(b.availability)} %`}</td>
                  <td>{duration(b.working_seconds)}</td><td>{duration(b.charging_seconds)}</td><td>{duration(b.faulted_seconds)}</td><td>{duration(b.offline_seconds)}</td><td>{duration(b.idle_seconds)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
      {!a && !answer.error && <p class="loading">Loading…</p>}
    </main>
  );
}

/** An object URL of `text` as a CSV file while the text lasts (a download link's href); revoked when it changes. */
function useBlobUrl(text: string | undefined): string | undefined {
  const [url, setUrl] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (text === undefined) return;
    const made = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [text]);
  return url;
}
