/** Request and response shapes of spec 4.1 (authentication and users). */
import Type from 'typebox';
import { Nullable, Timestamp } from './common.js';

export const Locale = Type.String({ minLength: 2, maxLength: 16, default: 'en', description: 'Language of messages (values not shown in the spec; any BCP 47 tag)' });
const Email = Type.String({ format: 'email', maxLength: 320 });
const Password = Type.String({ minLength: 1, maxLength: 256 });
const Name = Type.String({ minLength: 1, maxLength: 255 });
const PermissionKeys = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 500 });

export const PasswordPolicySchema = Type.Object({
  min_length: Type.Integer(),
  require_digit: Type.Boolean(),
  require_lowercase: Type.Boolean(),
  require_uppercase: Type.Boolean(),
  require_special: Type.Boolean(),
  special_characters: Type.String(),
  special_characters_pattern: Type.String(),
}, { description: 'Password policy (spec 2.7)' });

export const RoleResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  authority_level: Type.Integer(),
  is_seeded: Type.Boolean({ default: false }),
  permissions: Type.Array(Type.String()),
}, { description: 'Role (spec 2.4)' });

export const Identity = Type.Object({
  email: Type.String(),
  id: Type.Integer({ description: 'The user id; for an API key the negated key id (never a user\'s), with username api_key:<name>' }),
  role_id: Type.String(),
  username: Type.String(),
}, { description: 'Authenticated identity (spec 2.6)' });

export const UserSchema = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String({ format: 'email' }),
  otp: Nullable(Type.String({ description: 'Always null: reset codes are stored only as digests and delivered through the reset outbox' })),
  ...Timestamp('otp_expires_at', true),
  ...Timestamp('password_expires_at', true),
  role: Type.String({ description: 'Legacy: the role id' }),
  role_details: RoleResponse,
}, { description: 'User (spec 2.5)' });

export const ApiKeyInfo = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  api_key: Type.String({ description: 'The key\'s hint (its prefix and last characters): the value is shown only when the key is created' }),
  owner: Nullable(Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() }, { description: 'Beyond the spec: the user whose authority bounds the key at every use (null for keys made before owners were kept)' })),
  permission_keys: Type.Array(Type.String()),
  ...Timestamp('expires_at', true),
  ...Timestamp('last_used', true),
}, { description: 'API key (spec 2.2)' });

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.String({ description: 'Always "bearer"' }),
});

export const Message = Type.Object({ message: Type.String() });

export const LoginBody = Type.Object({ email: Email, password: Password, locale: Type.Optional(Locale) });
export const RefreshBody = Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 512 }) });
export const ForgotBody = Type.Object({ email: Email, locale: Type.Optional(Locale) });
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

export const CreateAccountResponse = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() });

export const UpdateUserBody = Type.Object({
  user_id: Type.Integer({ minimum: 1 }),
  username: Type.Optional(Name),
  email: Type.Optional(Email),
  role_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
}, { additionalProperties: false });

export const UpdateUserResponse = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String(), role_id: Type.String() });

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

export const KeyPermissionsBody = Type.Object({ permission_keys: PermissionKeys });

export const ApiKeyPermission = Type.Object({ group: Type.String(), key: Type.String() });
export const PermissionAssignment = Type.Object({
  key: Type.String(),
  group: Type.String(),
  composes: Type.Array(Type.String()),
  roles: Type.Array(Type.String()),
});
