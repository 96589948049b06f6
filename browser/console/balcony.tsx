/**
 * The balcony screen, for the person at one balcony: what to do with the carrier in front (box,
 * SKU, quantity, in letters readable at arm's length), confirm (the trigger), a short pick or
 * another problem, the next carrier coming, and how the request moves on. A barcode scanner
 * types into the scan field and sends Enter: the scanned code confirms the job, and the
 * controller refuses a code that is not this job's.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Identity } from './api';
import { usePulse, useLoad } from './hooks';
import { OPEN_JOBS_QUERY, PERSON_JOBS, waitText, type Job, type Page } from './model';
import { packLines, type PackLine } from './pack';

const VERB: Record<string, string> = {
  PICKING: 'Pick', PICKING_ALERT: 'Pick (stock short)', REFILLING: 'Refill', CHECKING: 'Check', PACKING: 'Pack', ONBOARDING: 'Place on the balcony', OFFBOARDING_BD: 'Take the bot off',
};

interface Progress {
  id: string;
  /** The request's number (spec `counter`): the order's reference a person reads and a WMS finds. */
  counter: number | undefined;
  status: string;
  done: number;
  total: number;
}

async function progressOf(requestId: string): Promise<Progress> {
  const [requests, graph] = await Promise.all([
    api<Page<{ id: string; status: string; counter: number }>>(`/api/v2/requests?id__eq=${encodeURIComponent(requestId)}`),
    api<{ nodes: { status: string }[] }>(`/api/v2/requests/${encodeURIComponent(requestId)}/job-graph`),
  ]);
  const nodes = graph.nodes.filter((n) => n.status !== 'CANCELLED');
  return { id: requestId, counter: requests.items[0]?.counter, status: requests.items[0]?.status ?? '?', done: nodes.filter((n) => n.status === 'SUCCEEDED').length, total: nodes.length };
}

export function BalconyScreen(props: { balcony: number; me: Identity }) {
  const pulse = usePulse(['jobs', 'requests'], 200, 5_000);
  const jobs = useLoad(() => api<Page<Job>>(`/api/v2/jobs?balcony_id__eq=${props.balcony}&${OPEN_JOBS_QUERY}&sort_by=created_at&size=100`).then((p) => p.items), [props.balcony, pulse]);
  const list = jobs.data ?? [];
  const current = list.find((j) => j.status === 'EXECUTING' && PERSON_JOBS.has(j.type) && j.details.waiting_for === 'trigger');
  const next = list.find((j) => j !== current && j.carrier_id !== null && j.carrier_id !== current?.carrier_id);
  const [lastRequest, setLastRequest] = useState<string | undefined>(undefined);
  const requestId = current?.request_id ?? lastRequest;
  const progress = useLoad(() => (requestId ? progressOf(requestId) : Promise.resolve(undefined)), [requestId, pulse]);
  // A packing job names no SKU of its own: what to pack is what the request's picks booked.
  const packing = useLoad(() => {
    if (current?.type !== 'PACKING') return Promise.resolve(undefined);
    const job = current.id;
    return picksOf(current.request_id).then((picks) => ({ job, lines: packLines(picks) }));
  }, [current?.id]);
  // The last answer stays while the next loads: never show one parcel's lines on another's job.
  const packLinesNow = packing.data && packing.data.job === current?.id ? packing.data.lines : undefined;
  const reference = progress.data && progress.data.id === current?.request_id && progress.data.counter !== undefined ? `#${progress.data.counter}` : undefined;
  const [message, setMessage] = useState<{ text: string; bad: boolean } | undefined>(undefined);
  const [mode, setMode] = useState<'normal' | 'short' | 'damaged'>('normal');
  const [busy, setBusy] = useState(false);
  const scan = useRef<HTMLInputElement>(null);
  const canTrigger = props.me.permissions.includes('jobs:trigger');

  // The scan field keeps the focus whenever a job comes up: the scanner types there.
  useEffect(() => {
    setMode('normal');
    if (current) scan.current?.focus();
  }, [current?.id]);

  const trigger = async (body: Record<string, unknown>, said: string) => {
    if (!current) return;
    if (!canTrigger) {
      setMessage({ text: 'Refused: confirming needs the permission jobs:trigger, which your role does not have.', bad: true });
      return;
    }
    setBusy(true);
    try {
      await api(`/api/v2/trigger/${encodeURIComponent(current.id)}`, { method: 'POST', body });
      setLastRequest(current.request_id);
      setMessage({ text: said, bad: false });
      setMode('normal');
      jobs.reload();
    } catch (err) {
      setMessage({ text: err instanceof ApiError ? `Not confirmed: ${err.message}` : `Not confirmed: ${(err as Error).message}`, bad: true });
    } finally {
      setBusy(false);
      scan.current?.focus();
    }
  };

  const what = current?.type === 'PACKING'
    ? `order ${reference ?? current.request_id}`
    : current ? `${current.quantity ?? ''} ${current.measurement_unit?.toLowerCase() ?? ''} ${current.sku_name ?? current.sku_id ?? ''}`.trim() : '';
  const onScan = (e: Event) => {
    e.preventDefault();
    const input = scan.current!;
    const code = input.value.trim();
    input.value = '';
    if (!current) return;
    if (code === '') return setMessage({ text: 'Scan the SKU, box or carrier, or press Confirm.', bad: true });
    void trigger({ TriggerStatus: 'SUCCEEDED_TRIGGER', selected_entity_id: code }, `Confirmed by scan: ${VERB[current.type] ?? current.type} ${what}.`);
  };
  const onProblem = (e: Event) => {
    e.preventDefault();
    if (!current) return;
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const qty = Number(form.get('quantity'));
    if (mode === 'short') void trigger({ TriggerStatus: 'SHORT_PICK_TRIGGER', selected_quantity: qty }, `Short pick of ${qty} confirmed.`);
    else void trigger({ TriggerStatus: 'DAMAGED_ITEM_TRIGGER', ...(qty > 0 ? { selected_quantity: qty } : {}) }, `Damaged items reported; ${qty} good item(s) picked.`);
  };
  const giveUp = () => void trigger({ TriggerStatus: 'CANCELLED_TRIGGER' }, 'Reported as not done: nothing booked; the job is handed back.');

  return (
    <main class="balcony" id="main" tabIndex={-1}>
      <h1>Balcony {props.balcony}</h1>
      {jobs.error && <p class="error" role="alert">{jobs.error}</p>}
      {current ? (
        <section class="task" aria-labelledby="task-title" data-testid="task">
          <h2 id="task-title" class="verb">{VERB[current.type] ?? current.type}</h2>
          {current.type === 'PACKING' ? <PackList lines={packLinesNow} error={packing.error} reference={reference} /> : (
            <>
              {current.quantity !== null && <p class="quantity" data-testid="quantity">{current.quantity} <span>{current.measurement_unit?.toLowerCase() ?? ''}</span></p>}
              {current.sku_id && <p class="sku"><span data-testid="sku">{current.sku_id}</span> {current.sku_name ?? ''}</p>}
              <dl class="where">
                <dt>Carrier</dt><dd data-testid="carrier">{current.carrier_id ?? '—'}</dd>
                <dt>Box</dt><dd data-testid="box">{current.box_id ?? '—'}</dd>
              </dl>
            </>
          )}
          <form class="scan" onSubmit={onScan}>
            <label for="scan">Scan SKU, box or carrier</label>
            <input id="scan" ref={scan} autocomplete="off" spellcheck={false} inputMode="none" disabled={busy} />
          </form>
          <div class="task-buttons">
            <button class="confirm-button" disabled={busy} onClick={() => void trigger({ TriggerStatus: 'SUCCEEDED_TRIGGER' }, `Confirmed: ${VERB[current.type] ?? current.type} ${what}.`)}>Confirm</button>
            {current.quantity !== null && current.sku_id && <button onClick={() => setMode(mode === 'short' ? 'normal' : 'short')} aria-expanded={mode === 'short'}>Short pick…</button>}
            {current.quantity !== null && current.sku_id && <button onClick={() => setMode(mode === 'damaged' ? 'normal' : 'damaged')} aria-expanded={mode === 'damaged'}>Damaged…</button>}
            <button class="danger" onClick={giveUp}>Cannot do it</button>
          </div>
          {mode !== 'normal' && (
            <form class="problem" onSubmit={onProblem}>
              <label for="quantity">{mode === 'short' ? 'Items actually picked' : 'Good items picked'}</label>
              <input id="quantity" name="quantity" type="number" min={mode === 'short' ? 1 : 0} max={current.quantity ?? undefined} required autofocus />
              <button type="submit">{mode === 'short' ? 'Confirm short pick' : 'Report damaged'}</button>
            </form>
          )}
        </section>
      ) : (
        <section class="task idle" data-testid="task-idle">
          <h2>No carrier in front</h2>
          <p>{list.length === 0 ? 'Nothing is coming to this balcony.' : `${list.length} job(s) on the way.`}</p>
        </section>
      )}
      <p role="status" class={message?.bad ? 'error big-message' : 'ok big-message'} data-testid="balcony-message">{message?.text ?? ''}</p>
      <div class="cards">
        <section class="card" data-testid="next">
          <h2>Next carrier</h2>
          {next ? <p><strong>{next.carrier_id}</strong> · {next.type.toLowerCase()} · {waitText(next)}</p> : <p>None queued.</p>}
        </section>
        <section class="card" aria-live="polite">
          <h2>Request</h2>
          {progress.data ? (
            <p data-testid="progress">{progress.data.id}: <strong data-testid="request-status">{progress.data.status}</strong>, <span data-testid="jobs-done">{progress.data.done}</span> of {progress.data.total} jobs done</p>
          ) : <p>—</p>}
        </section>
      </div>
    </main>
  );
}

/** The request's picks, done or not: packing follows all of them. */
async function picksOf(requestId: string): Promise<Job[]> {
  return (await api<Page<Job>>(`/api/v2/jobs?request_id__eq=${encodeURIComponent(requestId)}&type__eq=PICKING&size=100`)).items;
}

/** The Pack step: each SKU and how many of it, and the order's reference to write on the parcel. */
function PackList(props: { lines: PackLine[] | undefined; error: string | undefined; reference: string | undefined }) {
  return (
    <>
      {props.error && <p class="error" role="alert">{props.error}</p>}
      {props.lines === undefined ? <p class="sku">…</p> : props.lines.length === 0 ? <p class="sku">Nothing was picked: an empty parcel.</p> : (
        <ul class="pack-lines" data-testid="pack-lines">
          {props.lines.map((l) => (
            <li key={l.sku_id} data-testid="pack-line">
              <span class="quantity" data-testid="pack-quantity">{l.quantity} <span>{l.measurement_unit?.toLowerCase() ?? ''}</span></span>
              <span class="sku"><span data-testid="pack-sku">{l.sku_id}</span> {l.sku_name ?? ''}</span>
            </li>
          ))}
        </ul>
      )}
      <dl class="where">
        <dt>Order</dt><dd data-testid="order">{props.reference ?? '…'}</dd>
      </dl>
    </>
  );
}
