/** What POST /api/v2/settings takes (spec 4.11): the schema the HTTP layer checks and the type the settings domain receives. */
import Type, { type Static } from 'typebox';

export const SettingKey = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:-]+$', description: 'Setting key: letters, digits and . _ : -' });
export const AnyJson = Type.Unknown({ description: 'Any JSON value' });

/** A setting to create, or a known one's new value. */
export const CustomSettingBody = Type.Object({
  key: SettingKey,
  value_json: Type.Optional(AnyJson),
  default_value_json: Type.Optional(AnyJson),
  required_role: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 })),
  restart_required: Type.Optional(Type.Boolean({ default: false })),
});

export type CustomSettingInput = Static<typeof CustomSettingBody>;
