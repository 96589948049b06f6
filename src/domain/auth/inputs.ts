/**
 * The bodies of spec 4.1's writes (accounts, roles, API keys, password resets): the schemas the
 * HTTP layer checks, and the types the auth domain takes, one read of the other.
 */
import Type, { type Static } from 'typebox';

export const Locale = Type.String({ minLength: 2, maxLength: 16, default: 'en', description: 'Language of messages (values not shown in the spec; any BCP 47 tag)' });
export const Email = Type.String({ format: 'email', maxLength: 320 });
export const Password = Type.String({ minLength: 1, maxLength: 256 });
const Name = Type.String({ minLength: 1, maxLength: 255 });
export const PermissionKeys = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 500 });

// Either the reset code or the old password: said in the document too (the domain refuses a
// body with neither), so that a client generated from it does not send one.
export const ResetBody = Type.Object({
  email: Email,
  new_password: Password,
  locale: Type.Optional(Locale),
  old_password: Type.Optional(Password),
  otp: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
}, { anyOf: [{ required: ['otp'] }, { required: ['old_password'] }] });

export const CreateAccountBody = Type.Object({
  username: Name,
  email: Email,
  locale: Type.Optional(Locale),
  role: Type.Optional(Type.String({ minLength: 1, maxLength: 100, deprecated: true, description: 'Deprecated: use role_id. A role id or name.' })),
  role_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
}, { additionalProperties: false });

export const UpdateUserBody = Type.Object({
  user_id: Type.Integer({ minimum: 1 }),
  username: Type.Optional(Name),
  email: Type.Optional(Email),
  role_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
}, { additionalProperties: false });

export const RoleBody = Type.Object({
  name: Name,
  authority_level: Type.Integer({ minimum: 0, maximum: 1000 }),
  permissions: Type.Optional(PermissionKeys),
});

export const RolePatchBody = Type.Object({
  name: Type.Optional(Name),
  authority_level: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  permissions: Type.Optional(PermissionKeys),
});

export const GenerateKeyBody = Type.Object({
  name: Name,
  expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601 with offset; default: 30 days from now' })),
  never_expires: Type.Optional(Type.Boolean({ default: false })),
  permission_keys: Type.Optional(PermissionKeys),
});

export type ResetInput = Static<typeof ResetBody>;
export type CreateAccountInput = Static<typeof CreateAccountBody>;
export type UpdateUserInput = Static<typeof UpdateUserBody>;
export type NewRoleInput = Static<typeof RoleBody>;
export type RoleInput = Static<typeof RolePatchBody>;
/** A key as the domain takes it: `expires_at` read into epoch milliseconds. */
export type GenerateKeyInput = Omit<Static<typeof GenerateKeyBody>, 'expires_at'> & { expires_at?: number };
