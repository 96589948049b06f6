/**
 * The physical state of one simulated level that bots share: which cells can be driven, the
 * floor RFID tags (their memory can be rewritten by RFID_WRITE), and where the carriers stand.
 * Bots change it (lifting a carrier takes it off its cell); the site layout only seeds it.
 */
import { createHash } from 'node:crypto';
import type { SiteLevel } from '../domain/site/load.js';
import type { CarrierLayout } from '../domain/site/layout.js';

/** RFID tag user memory, bytes (PROTOCOL.md: reads and writes address 0..31). */
export const TAG_MEMORY = 32;

export interface Tag {
  uid: Buffer;
  memory: Buffer;
}

function uidFor(text: string): Buffer {
  // 7-byte UIDs (ISO 14443 double size), stable per tag so repeated runs read the same ones.
  return createHash('sha256').update(text).digest().subarray(0, 7);
}

const key = (x: number, y: number): string => `${x},${y}`;

export class LevelWorld {
  readonly id: number;
  private readonly floorTags = new Map<string, Tag>();
  private readonly carriersAt = new Map<string, string>();
  private readonly carrierTags = new Map<string, Tag>();

  constructor(
    private readonly level: SiteLevel,
    carriers: CarrierLayout[],
  ) {
    this.id = level.id;
    for (const c of level.rfid_tags) {
      // Floor tags hold their own cell at bytes 0..3 (x u16, y u16, little-endian).
      const memory = Buffer.alloc(TAG_MEMORY);
      memory.writeUInt16LE(c.x, 0);
      memory.writeUInt16LE(c.y, 2);
      this.floorTags.set(key(c.x, c.y), { uid: uidFor(`floor:${level.id}:${c.x}:${c.y}`), memory });
    }
    for (const c of carriers) {
      if (c.level_id !== level.id) continue;
      this.carriersAt.set(key(c.x, c.y), c.id);
      // A carrier's tag holds its id (UTF-8, zero-padded), which is what a bot reads back.
      const memory = Buffer.alloc(TAG_MEMORY);
      memory.write(c.id.slice(0, TAG_MEMORY), 'utf8');
      this.carrierTags.set(c.id, { uid: uidFor(`carrier:${c.id}`), memory });
    }
  }

  /** A cell a bot may enter: inside the grid and not a wall. */
  drivable(x: number, y: number): boolean {
    const kind = this.level.kindAt(x, y);
    return kind !== undefined && kind !== 'wall';
  }

  isCharger(x: number, y: number): boolean {
    return this.level.kindAt(x, y) === 'charger';
  }

  floorTag(x: number, y: number): Tag | undefined {
    return this.floorTags.get(key(x, y));
  }

  carrierAt(x: number, y: number): string | undefined {
    return this.carriersAt.get(key(x, y));
  }

  carrierTag(id: string): Tag | undefined {
    return this.carrierTags.get(id);
  }

  /** Takes the carrier off its cell (a bot lifted it). */
  takeCarrier(x: number, y: number): string | undefined {
    const id = this.carriersAt.get(key(x, y));
    if (id !== undefined) this.carriersAt.delete(key(x, y));
    return id;
  }

  /** Sets a carrier down on a cell. */
  putCarrier(id: string, x: number, y: number): void {
    this.carriersAt.set(key(x, y), id);
  }
}
