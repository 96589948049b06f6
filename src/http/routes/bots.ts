/** Spec 4.2 and 4.3: bots from live telemetry, and balcony LED sequences. */
import Type, { type Static } from 'typebox';
import type { BotView, SystemService } from '../../domain/system/control.js';
import { NotFoundError } from '../../domain/errors.js';
import { ledColourSteps, type LedColourStep, type LedLimits } from '../../domain/system/leds.js';
import type { Site } from '../../domain/site/load.js';
import { ErrorBody } from '../errors.js';
import { route, type AnyRoute } from '../route.js';
import { BotResponse } from '../schemas/bots.js';

/** The answer shape of a bot, shared by GET /bots and the live bot stream. */
export function botView(b: BotView) {
  return {
    id: b.id, level_id: b.level_id, battery_level: b.battery_level, is_charging: b.is_charging, lifted_carrier: b.carrier_held ? 1 : 0,
    online: b.online, in_service: b.in_service, line_up: b.line_up, x: b.x, y: b.y, heading: b.heading,
  };
}

const Channel = Type.Integer({ minimum: 0, maximum: 255 });
/** A spec LED step, bounded by what the balcony's LED controller plays. */
const LedStep = (LED: LedLimits) => Type.Object({
  colors: Type.Array(Type.Array(Channel, { minItems: 3, maxItems: 3 }), {
    minItems: 1, maxItems: LED.maxSteps, description: `Colours [r, g, b]; several play in turn within the step's duration (at most ${LED.maxSteps} colours in the whole sequence)`,
  }),
  duration: Type.Number({
    minimum: LED.minMs / 1000, maximum: LED.maxMs / 1000,
    description: `Seconds, ${LED.minMs / 1000} to ${LED.maxMs / 1000} (the LED controller's steps are whole milliseconds, ${LED.minMs} to ${LED.maxMs})`,
  }),
}, { description: 'LED step (spec 2.9)' });

const BotId = Type.Integer({ minimum: 1 });
const LevelId = Type.Integer({ minimum: 1 });
const BotQuery = Type.Object({
  id__eq: Type.Optional(Type.Integer({ minimum: 1, description: 'id equals' })),
  id__in: Type.Optional(Type.Array(BotId, { description: 'id one of; repeat the parameter once per value' })),
  level_id__eq: Type.Optional(Type.Integer({ minimum: 1, description: 'level_id equals' })),
  level_id__in: Type.Optional(Type.Array(LevelId, { description: 'level_id one of; repeat the parameter once per value' })),
  is_charging__eq: Type.Optional(Type.Boolean({ description: 'is_charging equals' })),
  id: Type.Optional(Type.Array(BotId, { description: 'Older name of id__in' })),
  level_id: Type.Optional(Type.Array(LevelId, { description: 'Older name of level_id__in' })),
  is_charging: Type.Optional(Type.Boolean({ description: 'Older name of is_charging__eq' })),
});

/**
 * The filter the parameters give; as on every list, each one given must hold (so `id__eq=1&id=2`
 * matches no bot). Undefined when none can.
 */
function botFilter(query: Static<typeof BotQuery>): { id?: number[]; level_id?: number[]; is_charging?: boolean } | undefined {
  const both = (lists: (readonly number[] | undefined)[]): number[] | undefined =>
    lists.reduce<number[] | undefined>((kept, list) => (list === undefined ? kept : kept === undefined ? [...list] : kept.filter((v) => list.includes(v))), undefined);
  const one = (n: number | undefined) => (n === undefined ? undefined : [n]);
  const id = both([one(query.id__eq), query.id__in, query.id]);
  const level = both([one(query.level_id__eq), query.level_id__in, query.level_id]);
  const charging = [query.is_charging__eq, query.is_charging].filter((v) => v !== undefined);
  if (charging.length === 2 && charging[0] !== charging[1]) return undefined;
  return { ...(id ? { id } : {}), ...(level ? { level_id: level } : {}), ...(charging.length > 0 ? { is_charging: charging[0]! } : {}) };
}

/** What the balcony LED route needs of the radio lines. */
export interface BalconyLeds {
  /** True once the balcony's LED controller acknowledged the sequence. */
  publishLeds(balconyId: number, steps: LedColourStep[]): Promise<boolean>;
}

/** GET /bots and POST /balcony_leds/balcony/{balcony_id}. */
/** `LED` is what the LED controller plays (firmware-protocol/messages.json's LED_SEQUENCE): a body it would refuse is a 422 here, not a `published: false` that looks like an unreachable controller. */
export function botRoutes(site: Site, system: SystemService, leds: BalconyLeds | undefined, LED: LedLimits): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/api/v2/bots', tag: 'Bots', permission: 'system:view',
      summary: 'Bots from live telemetry, filtered as every list is (spec 4.0.1): id__eq, id__in, level_id__eq, level_id__in, is_charging__eq',
      description: 'Not paginated (every bot of the site at once). `id`, `level_id` (both repeatable) and `is_charging` are older names of the same filters, kept. Every filter given must hold.',
      query: BotQuery,
      responses: { 200: Type.Array(BotResponse) },
      handler: ({ query }) => {
        const filter = botFilter(query);
        return filter ? system.bots(filter).map(botView) : [];
      },
    }),
    route({
      method: 'POST', path: '/api/v2/balcony_leds/balcony/{balcony_id}', tag: 'System', permission: 'system:balcony_leds',
      summary: 'Show an LED sequence at a balcony; published is true once its LED controller acknowledged it',
      params: Type.Object({ balcony_id: Type.Integer({ minimum: 0 }) }),
      body: Type.Object({ status: Type.Array(LedStep(LED), { minItems: 1, maxItems: LED.maxSteps, description: `1 to ${LED.maxSteps} steps, played in order` }) }),
      responses: { 200: Type.Object({ balcony_id: Type.Integer(), published: Type.Boolean() }), 404: ErrorBody },
      handler: async ({ params, body }) => {
        if (!site.balconies.some((b) => b.id === params.balcony_id)) throw new NotFoundError(`balcony ${params.balcony_id} does not exist`);
        const steps = ledColourSteps(body.status, LED);
        const published = leds ? await leds.publishLeds(params.balcony_id, steps) : false;
        return { balcony_id: params.balcony_id, published };
      },
    }),
  ];
}
