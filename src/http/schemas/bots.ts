/** Spec 2.8: a bot as GET /bots and the live bot stream show it. */
import Type from 'typebox';

export const BotResponse = Type.Object({
  id: Type.Integer(),
  level_id: Type.Integer(),
  battery_level: Type.Number({ description: 'Percent, 0 to 100' }),
  is_charging: Type.Boolean(),
  lifted_carrier: Type.Integer({ description: '1 when the bot holds a carrier, else 0' }),
  online: Type.Boolean({ description: 'Beyond the spec: the link hears the bot' }),
  in_service: Type.Boolean({ description: 'Beyond the spec: on its level in the database, so it may be given work (false once offboarded or removed)' }),
  line_up: Type.Boolean({
    description: 'Beyond the spec: its level\'s radio line is up. False for every bot of a level whose gateway is down (device gone, or no node answers; event 0x7009), while `online` false with `line_up` true is this bot alone',
  }),
  x: Type.Integer(),
  y: Type.Integer(),
  heading: Type.String(),
}, { $id: 'Bot', description: 'Bot (spec 2.8), with its position and link state' });
