/**
 * Fault codes and flags as firmware-protocol/messages.json lists them, read from the same file
 * the codec reads: the simulated bots raise exactly the codes, severities and flag bits the
 * protocol defines, and the brain knows which flags stop a bot.
 */
import { readFileSync } from 'node:fs';
import { TABLE_URL } from './table.js';
import type { Severity } from './messages.js';

export interface FaultDefinition {
  code: number;
  name: string;
  severity: Severity;
  /** the telemetry flag bit mask, 0 for faults without a flag (SEGMENT_LATE, LED_DRIVER) */
  flag: number;
}

interface TableJson {
  fault_flags: { bit: number; name: string }[];
  fault_codes: { code: number; name: string; flag: string | null; severity: Severity }[];
}

const json = JSON.parse(readFileSync(TABLE_URL, 'utf8')) as TableJson;

export const FAULT_FLAGS: ReadonlyMap<string, number> = new Map(json.fault_flags.map((f) => [f.name, 1 << f.bit]));

export const FAULTS: ReadonlyMap<number, FaultDefinition> = new Map(
  json.fault_codes.map((f) => [f.code, { code: f.code, name: f.name, severity: f.severity, flag: f.flag ? (FAULT_FLAGS.get(f.flag) ?? 0) : 0 }]),
);

export const FAULT_BY_NAME: ReadonlyMap<string, FaultDefinition> = new Map([...FAULTS.values()].map((f) => [f.name, f]));

/** The definition of a fault by name; throws on a name the table does not have (a typo in the sim). */
export function fault(name: string): FaultDefinition {
  const f = FAULT_BY_NAME.get(name);
  if (!f) throw new Error(`no fault ${name} in messages.json`);
  return f;
}

/**
 * Telemetry flags that stop a bot: those of ERROR and FATAL faults, which latch (PROTOCOL.md
 * section 12). Warnings (BATTERY_LOW, CHARGER_CONTACT, RFID_READER, LINK_LOST) leave it working:
 * a bot low on battery still takes its carrier home and goes to charge.
 */
export const STOPPING_FLAGS = [...FAULTS.values()].reduce((mask, f) => (f.severity === 'ERROR' || f.severity === 'FATAL' ? mask | f.flag : mask), 0);

/** The flag of link loss, kept by the node endpoint rather than as a fault record. */
export const LINK_LOST_FLAG = FAULT_FLAGS.get('LINK_LOST') ?? 0;
