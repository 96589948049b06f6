/**
 * The physical state of one simulated level that bots share: which cells can be driven, the
 * floor RFID tags (their memory can be rewritten by RFID_WRITE), and where the carriers stand.
 * Bots change it (lifting a carrier takes it off its cell), and so do people's hands
 * (hands.ts); the site layout only seeds it.
 */
import { createHash } from 'node:crypto';
import { CARRIER_PLACES, type SiteLevel } from '../domain/site/load.js';
import type { CarrierLayout, CellKind } from '../domain/site/layout.js';

/** RFID tag user memory, bytes (PROTOCOL.md: reads and writes address 0..31). */
export const TAG_MEMORY = 32;

export interface Tag {
  uid: Buffer;
  memory: Buffer;
}

/** A carrier standing on a cell of a level. */
export interface CarrierCell {
  id: string;
  x: number;
  y: number;
}

function uidFor(text: string): Buffer {
  // 7-byte UIDs (ISO 14443 double size), stable per tag so repeated runs read the same ones.
  return createHash('sha256').update(text).digest().subarray(0, 7);
}

const key = (x: number, y: number): string => `${x},${y}`;

/**
 * Every carrier's RFID tag, site-wide: a carrier taken off one level and put on another by
 * hand keeps its tag and whatever was written to it.
 */
export class CarrierTags {
  private readonly tags = new Map<string, Tag>();

  /** The carrier's tag, made on first sight holding its id (UTF-8, zero-padded), which is what a bot reads back. */
  of(id: string): Tag {
    let tag = this.tags.get(id);
    if (!tag) {
      const memory = Buffer.alloc(TAG_MEMORY);
      memory.write(id.slice(0, TAG_MEMORY), 'utf8');
      tag = { uid: uidFor(`carrier:${id}`), memory };
      this.tags.set(id, tag);
    }
    return tag;
  }

  get(id: string): Tag | undefined {
    return this.tags.get(id);
  }
}

export class LevelWorld {
  readonly id: number;
  private readonly floorTags = new Map<string, Tag>();
  private readonly carriersAt = new Map<string, string>();

  constructor(
    private readonly level: SiteLevel,
    carriers: CarrierLayout[],
    private readonly carrierTags: CarrierTags,
  ) {
    this.id = level.id;
    for (const c of level.rfid_tags) {
      // Floor tags hold their own cell at bytes 0..3 (x u16, y u16, little-endian).
      const memory = Buffer.alloc(TAG_MEMORY);
      memory.writeUInt16LE(c.x, 0);
      memory.writeUInt16LE(c.y, 2);
      this.floorTags.set(key(c.x, c.y), { uid: uidFor(`floor:${level.id}:${c.x}:${c.y}`), memory });
    }
    for (const c of carriers) if (c.level_id === level.id) this.putCarrier(c.id, c.x, c.y);
  }

  /** The kind of a cell, or undefined outside the grid. */
  kindAt(x: number, y: number): CellKind | undefined {
    return this.level.kindAt(x, y);
  }

  /** A cell a bot may enter: inside the grid and not a wall. */
  drivable(x: number, y: number): boolean {
    const kind = this.level.kindAt(x, y);
    return kind !== undefined && kind !== 'wall';
  }

  /** A cell a carrier can stand on by itself (a storage space, a buffer, a balcony port). */
  carrierPlace(x: number, y: number): boolean {
    return CARRIER_PLACES.has(this.level.kindAt(x, y));
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

  /** A carrier's tag, wherever the carrier is (on a cell or held up by a bot). */
  carrierTag(id: string): Tag {
    return this.carrierTags.of(id);
  }

  /** The carriers standing on the level's cells, by id. */
  carriers(): CarrierCell[] {
    const out: CarrierCell[] = [];
    for (const [cell, id] of this.carriersAt) {
      const [x, y] = cell.split(',').map(Number) as [number, number];
      out.push({ id, x, y });
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** The cell where a carrier stands on this level, if it does. */
  cellOf(id: string): CarrierCell | undefined {
    return this.carriers().find((c) => c.id === id);
  }

  /** Takes the carrier off its cell (a bot lifted it, or a person took it). */
  takeCarrier(x: number, y: number): string | undefined {
    const id = this.carriersAt.get(key(x, y));
    if (id !== undefined) this.carriersAt.delete(key(x, y));
    return id;
  }

  /** Sets a carrier down on a cell (a bot lowered it, or a person put it there); its tag comes with it. */
  putCarrier(id: string, x: number, y: number): void {
    this.carrierTags.of(id);
    this.carriersAt.set(key(x, y), id);
  }
}
