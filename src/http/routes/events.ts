/** Spec 4.7: the event log. */
import Type from 'typebox';
import { eventRecords, type EventRecord } from '../../domain/events/events.js';
import type { FieldTable, ListSource } from '../../domain/list/index.js';
import { stampPair } from '../../domain/time.js';
import type { Store } from '../../store/store.js';
import { listRoute } from '../list-route.js';
import type { AnyRoute } from '../route.js';
import { Nullable, Timestamp } from '../schemas/common.js';

export const EVENT_FIELDS: FieldTable<EventRecord> = {
  id: { type: 'integer', filters: ['gte', 'lte'], description: 'Durable, increasing id (beyond the spec: what the live stream resumes from)' },
  bot_id: { type: 'string', filters: ['eq'] },
  component: { type: 'string', filters: ['eq', 'ilike', 'in'], search: true, indexed: true },
  created_at: { type: 'datetime', filters: ['gte', 'lte'] },
  description: { type: 'string', search: true },
  hex_value: { type: 'string', filters: ['eq', 'ilike'] },
  level_id: { type: 'integer', filters: ['eq'] },
  request_id: { type: 'string', filters: ['eq', 'ilike'], indexed: true },
  severity: { type: 'integer', filters: ['eq', 'gte', 'lte', 'in'] },
};

export const EventResponse = Type.Object({
  id: Type.Integer({ description: 'Durable, increasing id (beyond the spec)' }),
  bot_id: Nullable(Type.String()),
  component: Type.String(),
  ...Timestamp('created_at'),
  description: Type.String(),
  hex_value: Type.String(),
  level_id: Nullable(Type.Integer()),
  request_id: Nullable(Type.String()),
  severity: Type.Integer({ description: '10 debug, 20 info, 30 notice, 40 warning, 50 error, 60 critical' }),
}, { description: 'Event (spec 2.14)' });

/** Events newest first (the default order) without a sort: the store reads its keys backwards. */
export function eventSource(store: Store): ListSource<EventRecord> {
  const events = store.collection(eventRecords);
  return {
    lookup(field, values) {
      if (field !== 'component' && field !== 'request_id') return undefined;
      const rows = values.flatMap((v) => [...events.findBy(field, v as string)]);
      return rows.sort((a, b) => b.id - a.id);
    },
    scan: () => events.range(undefined, true),
  };
}

/** The view of one event, shared by the list and the live stream. */
export function eventView(e: EventRecord, zone: string) {
  return {
    id: e.id, bot_id: e.bot_id, component: e.component, ...stampPair('created_at', e.created_at, zone),
    description: e.description, hex_value: e.hex_value, level_id: e.level_id, request_id: e.request_id, severity: e.severity,
  };
}

/** GET /api/v2/events. */
export function eventRoutes(store: Store, options: { timeZone: string; maxPageSize: number }): AnyRoute[] {
  return [
    listRoute({
      path: '/api/v2/events', tag: 'Events', permission: 'events:view',
      summary: 'The event log, newest first unless sort_by says otherwise',
      description: 'Severity: 10 debug, 20 info, 30 notice, 40 warning, 50 error, 60 critical. Kinds and codes: docs/events.md.',
      fields: EVENT_FIELDS, source: eventSource(store), item: EventResponse,
      view: (e) => eventView(e, options.timeZone), options: { maxPageSize: options.maxPageSize, timeZone: options.timeZone },
    }),
  ];
}
