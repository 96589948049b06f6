/**
 * The site view: one level drawn to scale, its bots live from the bot stream and coloured by
 * state; a click on a bot or a balcony (or a row of the list beside the map, for keyboards
 * and screen readers) shows what it is doing and why it waits.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from './api';
import { CELL_COLOURS, CELL_NAMES, drawFrame, drawGrid, type DrawnBot } from './draw';
import { usePulse, useLoad } from './hooks';
import { openStream } from './live';
import { botState, jobsByBot, OPEN_JOBS_QUERY, STATE_COLOURS, waitText, type Bot, type BotState, type Job, type LevelMap, type Page } from './model';

type Selection = { kind: 'bot'; id: number } | { kind: 'balcony'; id: number } | undefined;

const openJobs = () => api<Page<Job>>(`/api/v2/jobs?${OPEN_JOBS_QUERY}&size=1000`).then((p) => p.items);

export function SiteView(props: { level?: number; go(hash: string): void }) {
  const levels = useLoad(() => api<{ id: number; height: number }[]>('/api/v2/levels'), []);
  const levelId = props.level ?? levels.data?.[0]?.id;
  const map = useLoad(() => (levelId === undefined ? Promise.resolve(undefined) : api<LevelMap>(`/api/v2/levels/${levelId}/map`)), [levelId]);
  const pulse = usePulse(['jobs', 'requests', 'bots', 'system', 'lines']);
  const jobs = useLoad(openJobs, [pulse]);
  const [bots, setBots] = useState<Map<number, Bot>>(new Map());
  const [live, setLive] = useState(false);
  const [selected, setSelected] = useState<Selection>(undefined);

  useEffect(() => {
    if (levelId === undefined) return;
    setBots(new Map());
    const stream = openStream('/api/v2/bots/stream', () => ({ level_id: String(levelId) }), (m: { type: string; bots?: Bot[] }) => {
      if (m.type !== 'bots' || !m.bots) return;
      setBots((old) => {
        const next = new Map(old);
        for (const b of m.bots!) next.set(b.id, b);
        return next;
      });
    }, setLive);
    return () => stream.close();
  }, [levelId]);

  const byBot = useMemo(() => jobsByBot(jobs.data ?? [], bots.values(), map.data), [jobs.data, bots, map.data]);
  const states = useMemo(() => {
    const out = new Map<number, BotState>();
    for (const b of bots.values()) out.set(b.id, botState(b, byBot.get(b.id)));
    return out;
  }, [bots, byBot]);

  return (
    <main class="site" id="main" tabIndex={-1}>
      <div class="toolbar">
        <h1>Site</h1>
        <label for="level">Level</label>
        <select id="level" value={levelId} onChange={(e) => props.go(`#/site/${(e.currentTarget as HTMLSelectElement).value}`)}>
          {(levels.data ?? []).map((l) => <option value={l.id}>Level {l.id} ({l.height} m)</option>)}
        </select>
        <span class={live ? 'badge ok' : 'badge bad'} role="status">{live ? 'live' : 'connecting…'}</span>
        <span class="count" data-testid="bot-count">{bots.size} bots</span>
      </div>
      {levels.error && <p class="error" role="alert">{levels.error}</p>}
      {map.error && <p class="error" role="alert">{map.error}</p>}
      <div class="site-body">
        <div class="map-column">
          {map.data && <LevelCanvas map={map.data} bots={bots} states={states} selected={selected} onSelect={setSelected} />}
          <Legend />
        </div>
        <aside class="side" aria-label="Details">
          <Details selection={selected} bots={bots} states={states} byBot={byBot} jobs={jobs.data ?? []} />
          <BotList bots={bots} states={states} byBot={byBot} onSelect={(id) => setSelected({ kind: 'bot', id })} />
        </aside>
      </div>
    </main>
  );
}

function LevelCanvas(props: { map: LevelMap; bots: Map<number, Bot>; states: Map<number, BotState>; selected: Selection; onSelect(s: Selection): void }) {
  const { map } = props;
  const box = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [cell, setCell] = useState(12);
  const drawn = useRef(new Map<number, DrawnBot>());
  const frame = useRef<number | undefined>(undefined);
  const grid = useMemo(() => drawGrid(map, cell), [map, cell]);
  const selectedBot = props.selected?.kind === 'bot' ? props.selected.id : undefined;

  // The cell size that fits the level in the space the page gives it.
  useEffect(() => {
    const fit = () => {
      const width = box.current?.clientWidth ?? 800;
      const height = Math.max(240, window.innerHeight - 220);
      setCell(Math.max(3, Math.min(40, Math.floor(Math.min(width / map.width, height / map.depth)))));
    };
    fit();
    const observer = new ResizeObserver(fit);
    if (box.current) observer.observe(box.current);
    return () => observer.disconnect();
  }, [map]);

  // Telemetry in: each bot slides from where it is drawn now to its new cell.
  const paint = () => {
    frame.current = undefined;
    const g = canvas.current?.getContext('2d');
    if (!g) return;
    if (drawFrame(g, grid, drawn.current.values(), cell, performance.now(), selectedBot)) frame.current = requestAnimationFrame(paint);
  };
  useEffect(() => {
    const now = performance.now();
    const next = new Map<number, DrawnBot>();
    for (const b of props.bots.values()) {
      const was = drawn.current.get(b.id);
      const moved = !was || was.x !== b.x || was.y !== b.y;
      const t = was ? Math.min(1, (now - was.since) / 200) : 1;
      next.set(b.id, {
        id: b.id, x: b.x, y: b.y, heading: b.heading, carrier: b.lifted_carrier === 1, state: props.states.get(b.id) ?? 'idle',
        fromX: moved && was ? was.fromX + (was.x - was.fromX) * t : b.x,
        fromY: moved && was ? was.fromY + (was.y - was.fromY) * t : b.y,
        since: moved ? now : (was?.since ?? now),
      });
    }
    drawn.current = next;
    if (frame.current === undefined) frame.current = requestAnimationFrame(paint);
  }, [props.bots, props.states, grid, selectedBot]);
  useEffect(() => () => {
    if (frame.current !== undefined) cancelAnimationFrame(frame.current);
  }, []);

  const click = (e: MouseEvent) => {
    const rect = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    const cx = (e.clientX - rect.left) / cell;
    const cy = (e.clientY - rect.top) / cell;
    let best: { id: number; d: number } | undefined;
    for (const b of drawn.current.values()) {
      const d = Math.hypot(b.x + 0.5 - cx, b.y + 0.5 - cy);
      if (d < 0.8 && (!best || d < best.d)) best = { id: b.id, d };
    }
    if (best) return props.onSelect({ kind: 'bot', id: best.id });
    const x = Math.floor(cx);
    const y = Math.floor(cy);
    const balcony = map.balconies.find((b) => b.ports.some((p) => p.x === x && p.y === y));
    props.onSelect(balcony ? { kind: 'balcony', id: balcony.id } : undefined);
  };

  return (
    <div ref={box} class="map-box">
      <canvas ref={canvas} width={map.width * cell} height={map.depth * cell} data-cell={cell} onClick={click}
        role="img" aria-label={`Map of level ${map.id}: ${map.width} by ${map.depth} cells, ${props.bots.size} bots. The list beside it holds the same bots.`} />
    </div>
  );
}

function Legend() {
  return (
    <div class="legend" aria-label="Legend">
      {Object.entries(STATE_COLOURS).map(([name, colour]) => <span><i class="dot" style={{ background: colour }} />{name}</span>)}
      {Object.entries(CELL_NAMES).map(([c, name]) => <span><i class="cell" style={{ background: CELL_COLOURS[c] }} />{name}</span>)}
      <span><i class="cell" style={{ background: '#5d4037' }} />carrier on a bot</span>
    </div>
  );
}

function BotList(props: { bots: Map<number, Bot>; states: Map<number, BotState>; byBot: Map<number, Job>; onSelect(id: number): void }) {
  const rows = [...props.bots.values()].sort((a, b) => a.id - b.id);
  return (
    <section class="bot-list">
      <h2>Bots</h2>
      <table>
        <thead><tr><th scope="col">Bot</th><th scope="col">State</th><th scope="col">Cell</th><th scope="col">Battery</th><th scope="col">Job</th></tr></thead>
        <tbody>
          {rows.map((b) => {
            const state = props.states.get(b.id) ?? 'idle';
            return (
              <tr key={b.id}>
                <td><button class="link" onClick={() => props.onSelect(b.id)} aria-label={`Bot ${b.id}, ${state}`}>Bot {b.id}</button></td>
                <td data-testid={`bot-${b.id}-state`}><i class="dot" style={{ background: STATE_COLOURS[state] }} />{state}</td>
                <td data-testid={`bot-${b.id}-cell`}>{b.x},{b.y}</td>
                <td>{Math.round(b.battery_level)} %</td>
                <td>{props.byBot.get(b.id)?.type ?? '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

function Details(props: { selection: Selection; bots: Map<number, Bot>; states: Map<number, BotState>; byBot: Map<number, Job>; jobs: Job[] }) {
  const s = props.selection;
  if (!s) return <section class="details" aria-live="polite"><h2>Details</h2><p>Click a bot or a balcony on the map.</p></section>;
  if (s.kind === 'bot') {
    const bot = props.bots.get(s.id);
    const job = props.byBot.get(s.id);
    return (
      <section class="details" aria-live="polite" data-testid="bot-details">
        <h2>Bot {s.id}</h2>
        {bot ? (
          <dl>
            <dt>State</dt><dd>{props.states.get(s.id)}</dd>
            <dt>Position</dt><dd>({bot.x}, {bot.y}) facing {bot.heading}</dd>
            <dt>Battery</dt><dd>{Math.round(bot.battery_level)} %{bot.is_charging ? ', charging' : ''}</dd>
            <dt>Carrier</dt><dd>{bot.lifted_carrier ? 'holds a carrier' : 'none'}</dd>
            <dt>Link</dt><dd>{!bot.line_up ? 'radio line down' : bot.online ? 'online' : 'not heard'}</dd>
          </dl>
        ) : <p>Not on this level.</p>}
        <JobText job={job} none="No job: free for work." />
      </section>
    );
  }
  const balconyJobs = props.jobs.filter((j) => j.balcony_id === s.id);
  return (
    <section class="details" aria-live="polite" data-testid="balcony-details">
      <h2>Balcony {s.id}</h2>
      {balconyJobs.length === 0 ? <p>No open work at this balcony.</p> : balconyJobs.slice(0, 6).map((j) => <JobText job={j} none="" />)}
      <p><a href={`#/balcony/${s.id}`}>Open the balcony screen</a></p>
    </section>
  );
}

function JobText(props: { job: Job | undefined; none: string }) {
  const j = props.job;
  if (!j) return <p>{props.none}</p>;
  return (
    <div class="job">
      <p><strong>{j.type}</strong> {j.status.toLowerCase()}{j.carrier_id ? ` · carrier ${j.carrier_id}` : ''}{j.sku_id ? ` · ${j.sku_id}` : ''}</p>
      <p class="why" data-testid="why">{waitText(j)}</p>
      <p class="small">request {j.request_id}</p>
    </div>
  );
}
