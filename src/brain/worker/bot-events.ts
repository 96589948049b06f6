/**
 * What the radio lines tell of single bots, recorded for a technician: a bot's error or fatal
 * fault, and a bot lost or found on its line, become events with the bot's id; lesser faults
 * go to the log only.
 */
import { EVENT } from '../../domain/events/catalogue.js';
import type { Events } from '../../domain/events/events.js';
import type { BotEvent, LineStatus } from '../../lines/events.js';
import { FAULT_BY_NAME } from '../../link/protocol/faults.js';
import type { Logger } from '../../log/logger.js';

export interface BotEventsDeps {
  events: Events;
  /** What each level's line said last. */
  lines: ReadonlyMap<number, LineStatus>;
  log: Logger;
}

/** Records one bot event. */
export function recordBotEvent(deps: BotEventsDeps, event: BotEvent): void {
  if (event.kind === 'telemetry') return;
  const context = { bot_id: String(event.bot.id), level_id: event.bot.level_id };
  const record = (kind: (typeof EVENT)[keyof typeof EVENT], text: string) =>
    void deps.events.emit(kind, text, context).catch((err: unknown) => deps.log.error({ err }, 'could not record a bot event'));
  switch (event.kind) {
    case 'fault':
      if (event.fault.fault_state === 'RAISED' && (event.fault.severity === 'ERROR' || event.fault.severity === 'FATAL')) {
        record(EVENT.botFault, `bot ${event.bot.id}: fault 0x${event.fault.code.toString(16).padStart(4, '0')} (${event.fault.severity}) at ${event.fault.x},${event.fault.y}${faultDetail(event.fault)}`);
      } else deps.log.info({ bot_id: event.bot.id, fault: event.fault }, 'bot fault report');
      break;
    case 'offline': {
      // A bot lost with its whole line says so: the line's own 0x7009 is the news, this one is its echo.
      const line = deps.lines.get(event.bot.level_id);
      const withLine = line && !line.up ? `; the radio line of level ${line.level_id} is down (event 0x7009)` : '';
      record(EVENT.botOffline, `bot ${event.bot.id} lost on the radio line (${event.reason})${withLine}`);
      break;
    }
    case 'online':
      record(EVENT.botOnline, `bot ${event.bot.id} answers on the radio line (${event.reason})`);
      break;
  }
}

/** OBSTACLE's detail is the cell the bot could not enter (x | y << 16): a technician looks there first. */
function faultDetail(fault: { code: number; detail: number }): string {
  if (fault.code !== FAULT_BY_NAME.get('OBSTACLE')!.code) return '';
  return `; blocked entering ${fault.detail & 0xffff},${fault.detail >>> 16}`;
}
