/**
 * A level as the planner sees it (native/planner/model.h): cells linearised row * width + col,
 * flags per cell (walls blocked; storage spaces holding a carrier barred to a bot that holds
 * one), headings clockwise from east. The bot protocol counts headings from north and moves
 * in absolute directions; the conversions live here, in one place.
 */
import type { Heading as ProtocolHeading, StepAction } from '../../../link/protocol/messages.js';
import type { SiteLevel } from '../../../domain/site/load.js';
import { CELL_BARRED_LOADED, CELL_BLOCKED, type PlannerGrid, type PlannerHeading } from '../../../native/planner.js';


const TO_PLANNER: Record<ProtocolHeading, PlannerHeading> = { E: 0, S: 1, W: 2, N: 3 };
const MOVE: readonly StepAction[] = ['MOVE_E', 'MOVE_S', 'MOVE_W', 'MOVE_N'];

/** The grid of a level with the storage spaces that hold carriers now (`occupied(x, y)`). */
export function levelGrid(level: SiteLevel, occupied: (x: number, y: number) => boolean): PlannerGrid {
  const flags = new Uint8Array(level.width * level.rows);
  for (let y = 0; y < level.rows; y++) {
    for (let x = 0; x < level.width; x++) flags[y * level.width + x] = cellFlags(level, x, y, occupied(x, y));
  }
  return { width: level.width, height: level.rows, flags };
}

/** The flags of one cell: walls are blocked; a cell with a carrier standing on it is barred to loaded bots. */
export function cellFlags(level: SiteLevel, x: number, y: number, occupied: boolean): number {
  const kind = level.kindAt(x, y);
  if (kind === undefined || kind === 'wall') return CELL_BLOCKED;
  return occupied ? CELL_BARRED_LOADED : 0;
}

export function plannerHeading(h: ProtocolHeading): PlannerHeading {
  return TO_PLANNER[h];
}

/** The SEGMENT step that moves one cell from `from` to the neighbouring `to` (cells of a `width`-wide grid). */
export function moveStep(from: number, to: number, width: number, durationMs: number): { action: StepAction; cells: number; duration_ms: number } {
  const d = to - from;
  const heading: PlannerHeading = d === 1 ? 0 : d === width ? 1 : d === -1 ? 2 : 3;
  if (d !== 1 && d !== width && d !== -1 && d !== -width) throw new Error(`cells ${from} and ${to} are not neighbours`);
  return { action: MOVE[heading]!, cells: 1, duration_ms: durationMs };
}
