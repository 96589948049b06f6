/**
 * Drawing a level on a canvas: the grid once into an offscreen layer (a 100,000-space level is
 * drawn once, not per frame), then per frame that layer and the bots, each slid from where it
 * was to where the last telemetry put it so motion looks continuous at the stream's 5 Hz.
 */
import { STATE_COLOURS, type BotState, type LevelMap } from './model';

/** Cell colours by the site file's characters; the legend on the page names each. */
export const CELL_COLOURS: Record<string, string> = {
  '.': '#f4f6f9',
  '#': '#3b4048',
  S: '#cdb98f',
  B: '#8ecae6',
  P: '#ffd166',
  C: '#95d5b2',
};
export const CELL_NAMES: Record<string, string> = { '.': 'highway', S: 'storage space', B: 'buffer', P: 'balcony position', C: 'charger', '#': 'wall' };

/** Time a bot takes on screen to slide to its new cell: one stream period. */
const SLIDE_MS = 200;

export interface DrawnBot {
  id: number;
  fromX: number;
  fromY: number;
  x: number;
  y: number;
  since: number;
  heading: string;
  carrier: boolean;
  state: BotState;
}

/** The level's cells drawn once at `cell` pixels a cell. */
export function drawGrid(map: LevelMap, cell: number): HTMLCanvasElement {
  const layer = document.createElement('canvas');
  layer.width = map.width * cell;
  layer.height = map.depth * cell;
  const g = layer.getContext('2d')!;
  for (let y = 0; y < map.depth; y++) {
    const row = map.rows[y] ?? '';
    for (let x = 0; x < map.width; x++) {
      g.fillStyle = CELL_COLOURS[row[x] ?? '#'] ?? CELL_COLOURS['#']!;
      g.fillRect(x * cell, y * cell, cell, cell);
    }
  }
  if (cell >= 6) {
    // Thin grid lines between cells, so a lane's depth can be counted.
    g.strokeStyle = 'rgba(0,0,0,0.08)';
    g.lineWidth = 1;
    g.beginPath();
    for (let x = 0; x <= map.width; x++) {
      g.moveTo(x * cell + 0.5, 0);
      g.lineTo(x * cell + 0.5, map.depth * cell);
    }
    for (let y = 0; y <= map.depth; y++) {
      g.moveTo(0, y * cell + 0.5);
      g.lineTo(map.width * cell, y * cell + 0.5);
    }
    g.stroke();
  }
  // Balcony numbers on their first position.
  if (cell >= 10) {
    g.fillStyle = '#1f2328';
    g.font = `bold ${Math.floor(cell * 0.6)}px system-ui, sans-serif`;
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    for (const b of map.balconies) {
      const p = b.ports[0];
      if (p) g.fillText(String(b.id), (p.x + 0.5) * cell, (p.y + 0.5) * cell);
    }
  }
  return layer;
}

const HEADING: Record<string, [number, number]> = { N: [0, -1], E: [1, 0], S: [0, 1], W: [-1, 0] };

/** One frame: the grid layer, then every bot where it is at `now`; returns whether any bot is still sliding. */
export function drawFrame(g: CanvasRenderingContext2D, grid: HTMLCanvasElement, bots: Iterable<DrawnBot>, cell: number, now: number, selected: number | undefined): boolean {
  g.drawImage(grid, 0, 0);
  let moving = false;
  for (const b of bots) {
    const t = Math.min(1, (now - b.since) / SLIDE_MS);
    if (t < 1) moving = true;
    const x = (b.fromX + (b.x - b.fromX) * t + 0.5) * cell;
    const y = (b.fromY + (b.y - b.fromY) * t + 0.5) * cell;
    const r = cell * 0.42;
    g.beginPath();
    g.arc(x, y, r, 0, Math.PI * 2);
    g.fillStyle = STATE_COLOURS[b.state];
    g.fill();
    g.lineWidth = b.id === selected ? Math.max(2, cell * 0.15) : 1.5;
    g.strokeStyle = b.id === selected ? '#000' : '#fff';
    g.stroke();
    if (b.carrier) {
      // A carrier on the move: a square on the bot.
      g.fillStyle = '#5d4037';
      g.fillRect(x - r * 0.55, y - r * 0.55, r * 1.1, r * 1.1);
    }
    const [hx, hy] = HEADING[b.heading] ?? [0, 0];
    g.beginPath();
    g.moveTo(x + hx * r * 0.6, y + hy * r * 0.6);
    g.lineTo(x + hx * r * 1.15, y + hy * r * 1.15);
    g.strokeStyle = '#000';
    g.lineWidth = Math.max(1, cell * 0.08);
    g.stroke();
    if (cell >= 16 && !b.carrier) {
      g.fillStyle = '#fff';
      g.font = `bold ${Math.floor(cell * 0.4)}px system-ui, sans-serif`;
      g.textAlign = 'center';
      g.textBaseline = 'middle';
      g.fillText(String(b.id), x, y);
    }
  }
  return moving;
}
