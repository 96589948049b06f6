/**
 * The site layout file: the one JSON document that describes a physical site (levels and
 * their grids, bots, balconies, carriers with their boxes, initial SKUs). This file holds
 * its TypeBox schema, the TS types derived from it, and the cell legend. The rules a schema
 * cannot express (row lengths, cells under bots, references between parts) live in load.ts.
 */
import Type, { type Static } from 'typebox';

/** Format version this controller reads; bumped on incompatible changes. */
export const LAYOUT_VERSION = 1;

/** Deepest lane a bot can serve: a storage cell further from a highway is unreachable. */
export const MAX_LANE_DEPTH = 3;

/** What a grid cell is. */
export type CellKind = 'highway' | 'wall' | 'storage' | 'buffer' | 'port' | 'charger';

/** One character per cell; anything else in a row is an error. */
export const LEGEND: Readonly<Record<string, CellKind>> = {
  '.': 'highway',
  '#': 'wall',
  S: 'storage',
  B: 'buffer',
  P: 'port',
  C: 'charger',
};

/** The character that draws each kind (the inverse of LEGEND). */
export const CELL_CHAR: Readonly<Record<CellKind, string>> = {
  highway: '.',
  wall: '#',
  storage: 'S',
  buffer: 'B',
  port: 'P',
  charger: 'C',
};

// The spec names only PIECE, UNASSIGN and DO_NOTHING; the others are the units an
// integrator would expect and are listed in docs/site-layout.md.
export const MEASUREMENT_UNITS = ['PIECE', 'PACK', 'PAIR', 'METER', 'KILOGRAM', 'LITER'] as const;
export const ON_EMPTY_SKU_ACTIONS = ['UNASSIGN', 'DO_NOTHING'] as const;
export const HEADINGS = ['N', 'E', 'S', 'W'] as const;
export type Heading = (typeof HEADINGS)[number];

const Coord = Type.Integer({ minimum: 0, maximum: 65535 });
const Point = Type.Object({ x: Coord, y: Coord }, { additionalProperties: false });

const BotSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'Bot id, unique in the site' }),
    start: Point,
    heading: Type.Enum([...HEADINGS], { description: 'N is towards row 0, E towards higher x' }),
  },
  { additionalProperties: false },
);

const LevelSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'Level id, unique in the site' }),
    height: Type.Number({ minimum: 0, description: 'Height of the level\'s floor above the ground, metres' }),
    grid: Type.Object(
      {
        width: Type.Integer({ minimum: 1, maximum: 4096 }),
        height: Type.Integer({ minimum: 1, maximum: 4096 }),
      },
      { additionalProperties: false },
    ),
    rows: Type.Array(Type.String(), { minItems: 1, description: 'One string per grid row (y), one character per cell (x)' }),
    rfid_tags: Type.Optional(Type.Array(Point, { description: 'Default: one tag on every highway cell' })),
    box_height_max: Type.Optional(Type.Integer({ minimum: 1, description: 'Tallest box a carrier on this level may hold, millimetres (default 400)' })),
    serial_device: Type.String({
      pattern: '^(sim|/dev/\\S+|tcp://(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))$',
      description: 'Radio gateway: a serial device (/dev/...), a serial-to-Ethernet device server (tcp://host:port, an IPv6 host in brackets), or "sim"',
    }),
    bots: Type.Array(BotSchema),
  },
  { additionalProperties: false },
);

const BalconySchema = Type.Object(
  {
    id: Type.Integer({ minimum: 0 }),
    level_id: Type.Integer({ minimum: 1 }),
    ports: Type.Array(Point, { minItems: 1 }),
  },
  { additionalProperties: false },
);

const LoadSchema = Type.Object(
  {
    sku_id: Type.String({ minLength: 1 }),
    item_count: Type.Integer({ minimum: 0 }),
    item_count_max: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);

const BoxSchema = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'Box id, unique in the site' }),
    section_code: Type.String({
      pattern: '^([01]{1,8}|[01]{16}|[01]{32})$',
      description: 'Sections of the carrier the box takes: binary digits, at most 8 (legacy), 16 or 32',
    }),
    load: Type.Optional(LoadSchema),
  },
  { additionalProperties: false },
);

const CarrierSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64 }),
    level_id: Type.Integer({ minimum: 1 }),
    x: Coord,
    y: Coord,
    boxes: Type.Optional(Type.Array(BoxSchema)),
  },
  { additionalProperties: false },
);

const SkuSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 128 }),
    name: Type.String(),
    measurement_unit: Type.Optional(Type.Enum([...MEASUREMENT_UNITS])),
    on_empty_sku_action: Type.Optional(Type.Enum([...ON_EMPTY_SKU_ACTIONS])),
    balcony_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }))),
  },
  { additionalProperties: false },
);

/** The whole layout file. */
export const SiteLayoutSchema = Type.Object(
  {
    version: Type.Literal(LAYOUT_VERSION),
    name: Type.String({ minLength: 1 }),
    levels: Type.Array(LevelSchema, { minItems: 1 }),
    balconies: Type.Array(BalconySchema),
    carriers: Type.Array(CarrierSchema),
    skus: Type.Array(SkuSchema),
  },
  { additionalProperties: false },
);

export type SiteLayout = Static<typeof SiteLayoutSchema>;
export type LevelLayout = SiteLayout['levels'][number];
export type BotLayout = LevelLayout['bots'][number];
export type BalconyLayout = SiteLayout['balconies'][number];
export type CarrierLayout = SiteLayout['carriers'][number];
export type BoxLayout = NonNullable<CarrierLayout['boxes']>[number];
export type LoadLayout = NonNullable<BoxLayout['load']>;
export type SkuLayout = SiteLayout['skus'][number];
export type MeasurementUnit = (typeof MEASUREMENT_UNITS)[number];
export type OnEmptySkuAction = (typeof ON_EMPTY_SKU_ACTIONS)[number];
