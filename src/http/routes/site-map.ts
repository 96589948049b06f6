/**
 * `GET /api/v2/levels/{level_id}/map` (beyond the spec): one level's grid as the site file
 * draws it, so a client (the browser console, docs/console.md) can draw the level to scale
 * without the site file at hand. The rows are the site file's own characters: one per cell,
 * legend in `legend`; the answer is the same for the daemon's whole life.
 */
import Type from 'typebox';
import { NotFoundError } from '../../domain/errors.js';
import type { Site } from '../../domain/site/load.js';
import { LEGEND } from '../../domain/site/layout.js';
import { ErrorBody } from '../errors.js';
import { JsonReply, route, type AnyRoute } from '../route.js';

const Point = Type.Object({ x: Type.Integer(), y: Type.Integer() });

export const LevelMap = Type.Object({
  id: Type.Integer(),
  height: Type.Number({ description: 'Floor height above ground, metres' }),
  width: Type.Integer({ description: 'Cells along x' }),
  depth: Type.Integer({ description: 'Cells along y (the number of rows)' }),
  rows: Type.Array(Type.String(), { description: 'One string per row y (y grows downwards, N is row 0), one character per cell x; see legend' }),
  legend: Type.Record(Type.String(), Type.String(), { description: 'Character to cell kind: highway, wall, storage, buffer, port (balcony position), charger' }),
  balconies: Type.Array(Type.Object({ id: Type.Integer(), ports: Type.Array(Point) }), { description: 'Balconies of this level and their positions (P cells)' }),
}, { description: 'A level drawn from the site file (beyond the spec)' });

/** GET /levels/{level_id}/map. */
export function siteMapRoutes(site: Site): AnyRoute[] {
  // Built once per level on first ask: the site does not change while the daemon runs.
  const answers = new Map<number, string>();
  const answer = (levelId: number): string | undefined => {
    const cached = answers.get(levelId);
    if (cached !== undefined) return cached;
    const level = site.level(levelId);
    const layout = site.layout.levels.find((l) => l.id === levelId);
    if (!level || !layout) return undefined;
    const json = JSON.stringify({
      id: level.id, height: level.height, width: level.width, depth: level.rows, rows: layout.rows, legend: LEGEND,
      balconies: level.balconies.map((b) => ({ id: b.id, ports: b.ports.map((p) => ({ x: p.x, y: p.y })) })),
    });
    answers.set(levelId, json);
    return json;
  };
  return [
    route({
      method: 'GET', path: '/api/v2/levels/{level_id}/map', tag: 'System', permission: 'system:view',
      summary: 'One level\'s grid, as the site file draws it (beyond the spec)',
      description: 'The cells of a level (storage spaces, buffers, highways, balcony positions, chargers) for clients that draw the site, such as the console at /console.',
      params: Type.Object({ level_id: Type.Integer({ minimum: 1 }) }),
      responses: { 200: LevelMap, 404: ErrorBody },
      handler: ({ params }) => {
        const json = answer(params.level_id);
        if (json === undefined) throw new NotFoundError(`level ${params.level_id} does not exist`);
        return new JsonReply(json);
      },
    }),
  ];
}
