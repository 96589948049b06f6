/** Request and response shapes of spec 4.1 (authentication and users). */
import Type from 'typebox';
import { Nullable, Timestamp } from './common.js';
import {
  CreateAccountBody, Email, GenerateKeyBody, Locale, Password, PermissionKeys, ResetBody, RoleBody, RolePatchBody, UpdateUserBody,
} from '../../domain/auth/inputs.js';

export { CreateAccountBody, GenerateKeyBody, Locale, ResetBody, RoleBody, RolePatchBody, UpdateUserBody };


export const PasswordPolicySchema = Type.Object({
  min_length: Type.Integer(),
  require_digit: Type.Boolean(),
  require_lowercase: Type.Boolean(),
  require_uppercase: Type.Boolean(),
  require_special: Type.Boolean(),
  special_characters: Type.String(),
  special_characters_pattern: Type.String(),
}, { $id: 'PasswordPolicy', description: 'Password policy (spec 2.7)' });

export const RoleResponse = Type.Object({
  id: Type.String(),
  name: Type.String(),
  authority_level: Type.Integer(),
  is_seeded: Type.Boolean({ default: false }),
  permissions: Type.Array(Type.String()),
}, { $id: 'Role', description: 'Role (spec 2.4)' });

export const Identity = Type.Object({
  email: Type.String(),
  id: Type.Integer({ description: 'The user id; for an API key the negated key id (never a user\'s), with username api_key:<name>' }),
  role_id: Type.String(),
  username: Type.String(),
}, { $id: 'Identity', description: 'Authenticated identity (spec 2.6)' });

export const UserSchema = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  email: Type.String({ format: 'email' }),
  otp: Nullable(Type.String({ description: 'Always null: reset codes are stored only as digests and delivered through the reset outbox' })),
  ...Timestamp('otp_expires_at', true),
  ...Timestamp('password_expires_at', true),
  role: Type.String({ description: 'Legacy: the role id' }),
  role_details: RoleResponse,
}, { $id: 'User', description: 'User (spec 2.5)' });

export const ApiKeyInfo = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  api_key: Type.String({ description: 'The key\'s hint (its prefix and last characters): the value is shown only when the key is created' }),
  owner: Nullable(Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() }, { description: 'Beyond the spec: the user whose authority bounds the key at every use (null for keys made before owners were kept)' })),
  permission_keys: Type.Array(Type.String()),
  ...Timestamp('expires_at', true),
  ...Timestamp('last_used', true),
}, { $id: 'ApiKey', description: 'API key (spec 2.2)' });

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.String({ description: 'Always "bearer"' }),
});

export const Message = Type.Object({ message: Type.String() });

export const LoginBody = Type.Object({ email: Email, password: Password, locale: Type.Optional(Locale) });
export const RefreshBody = Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 512 }) });
export const ForgotBody = Type.Object({ email: Email, locale: Type.Optional(Locale) });
export const CreateAccountResponse = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String() });

export const UpdateUserResponse = Type.Object({ id: Type.Integer(), username: Type.String(), email: Type.String(), role_id: Type.String() });

export const KeyPermissionsBody = Type.Object({ permission_keys: PermissionKeys });

export const ApiKeyPermission = Type.Object({ group: Type.String(), key: Type.String() });
export const PermissionAssignment = Type.Object({
  key: Type.String(),
  group: Type.String(),
  composes: Type.Array(Type.String()),
  roles: Type.Array(Type.String()),
});
