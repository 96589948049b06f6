/**
 * Fault codes and flags as firmware-protocol/messages.json lists them, read from the same file
 * the codec reads, so the simulated bots raise exactly the codes, severities and flag bits the
 * protocol defines.
 */
import { readFileSync } from 'node:fs';
import { TABLE_URL } from '../link/protocol/table.js';
import type { Severity } from '../link/protocol/messages.js';

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

/** The flag of link loss, kept by the node endpoint rather than as a fault record. */
export const LINK_LOST_FLAG = FAULT_FLAGS.get('LINK_LOST') ?? 0;
