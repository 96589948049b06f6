/** Spec 4.11: settings. */
import Type from 'typebox';
import type { Settings } from '../../domain/settings/settings.js';
import { AnyJson, CustomSettingBody, SettingKey } from '../../domain/settings/inputs.js';
import { stampPair } from '../../domain/time.js';
import { AUTHENTICATED, route, type AnyRoute, type Caller } from '../route.js';
import { ErrorBody } from '../errors.js';
import { Nullable, Timestamp } from '../schemas/common.js';


const SettingResponse = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key: Type.String(),
  value_json: AnyJson,
  default_value_json: AnyJson,
  required_role: Type.Array(Type.String()),
  restart_required: Type.Boolean({ default: false }),
  user_idx: Nullable(Type.Integer()),
  ...Timestamp('created_at'),
  ...Timestamp('updated_at'),
}, { $id: 'Setting', description: 'Setting (spec 2.20)' });

const SettingItem = Type.Object({
  key: Type.String(),
  value_type: Type.String(),
  scope: Type.String({ description: 'system or user' }),
  user_idx: Nullable(Type.Integer()),
  value_json: AnyJson,
  default_value_json: AnyJson,
  effective_value_json: AnyJson,
  effective_value_known: Type.Boolean(),
  enum_values: Nullable(Type.Array(Type.String())),
  minimum: Nullable(Type.Number()),
  maximum: Nullable(Type.Number()),
  required_role: Type.Array(Type.String()),
  restart_required: Type.Boolean(),
}, { description: 'Setting list item (spec 2.20)' });

const Resolved = Type.Object({ settings: Type.Record(Type.String(), Type.Unknown()) });
const SystemResolved = Type.Object({
  settings: Type.Record(Type.String(), Type.Unknown()),
  pending_restart: Type.Record(Type.String(), Type.Unknown(), { description: 'restart_required settings whose stored value is not yet in use: key -> value after the next start' }),
});
const UpdatesBody = Type.Object({
  updates: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { description: 'key -> new value' })),
  resets: Type.Optional(Type.Array(SettingKey, { maxItems: 200, description: 'Keys whose stored value is removed so the default applies' })),
});
const UserIdx = Type.Object({ user_idx: Type.Integer({ minimum: 1 }) });
const KeyParam = Type.Object({ key: SettingKey });

/** The routes of spec 4.11. */
export function settingsRoutes(settings: Settings, timeZone: string): AnyRoute[] {
  const userOf = (caller: Caller) => (caller.kind === 'user' ? caller.id! : null);
  const view = (s: ReturnType<Settings['get']>) => ({
    id: s.id, key: s.key, value_json: s.value_json, default_value_json: s.default_value_json, required_role: s.required_role,
    restart_required: s.restart_required, user_idx: s.user_idx,
    ...stampPair('created_at', s.created_at, timeZone),
    ...stampPair('updated_at', s.updated_at, timeZone),
  });

  return [
    route({
      method: 'GET', path: '/api/v2/settings', tag: 'Settings', permission: 'settings:view', summary: 'Every setting visible to the caller, with its effective value',
      responses: { 200: Type.Object({ items: Type.Array(SettingItem), total: Type.Integer() }) },
      handler: ({ caller }) => {
        const items = settings.list(caller, userOf(caller));
        return { items, total: items.length };
      },
    }),
    route({
      method: 'POST', path: '/api/v2/settings', tag: 'Settings', permission: 'settings:update',
      summary: 'Create a setting, or update it when the key exists (known keys take only value_json)',
      body: CustomSettingBody,
      responses: { 200: SettingResponse },
      handler: async ({ caller, body }) => {
        await settings.upsert(caller, body);
        return view(settings.get(caller, body.key));
      },
    }),
    route({
      method: 'GET', path: '/api/v2/settings/system', tag: 'Settings', permission: 'settings:view', summary: 'Resolved system settings, and those pending a restart',
      responses: { 200: SystemResolved },
      handler: ({ caller }) => ({ settings: settings.resolved(caller, 'system', null), pending_restart: settings.pendingRestart() }),
    }),
    route({
      method: 'PATCH', path: '/api/v2/settings/system', tag: 'Settings', permission: 'settings:update', summary: 'Change and reset system settings in one step',
      body: UpdatesBody, responses: { 200: Resolved },
      handler: async ({ caller, body }) => {
        await settings.update(caller, null, body.updates ?? {}, body.resets ?? []);
        return { settings: settings.resolved(caller, 'system', null) };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/settings/users/{user_idx}', tag: 'Settings', permission: AUTHENTICATED,
      summary: 'Resolved settings of a user (others\' need settings:view)',
      params: UserIdx, responses: { 200: Resolved, 404: ErrorBody },
      handler: ({ caller, params }) => {
        settings.checkUserAccess(caller, params.user_idx, 'settings:view');
        return { settings: settings.resolved(caller, 'user', params.user_idx) };
      },
    }),
    route({
      method: 'PATCH', path: '/api/v2/settings/users/{user_idx}', tag: 'Settings', permission: AUTHENTICATED,
      summary: 'Change and reset a user\'s settings (others\' need settings:update_users)',
      params: UserIdx, body: UpdatesBody, responses: { 200: Resolved, 404: ErrorBody },
      handler: async ({ caller, params, body }) => {
        settings.checkUserAccess(caller, params.user_idx, 'settings:update_users');
        await settings.update(caller, params.user_idx, body.updates ?? {}, body.resets ?? []);
        return { settings: settings.resolved(caller, 'user', params.user_idx) };
      },
    }),
    route({
      method: 'GET', path: '/api/v2/settings/{key}', tag: 'Settings', permission: 'settings:view', summary: 'One setting',
      params: KeyParam, responses: { 200: SettingResponse, 404: ErrorBody },
      handler: ({ caller, params }) => view(settings.get(caller, params.key)),
    }),
    route({
      method: 'PATCH', path: '/api/v2/settings/{key}', tag: 'Settings', permission: 'settings:update',
      summary: 'Set a system setting; it takes effect at once unless restart_required',
      params: KeyParam, body: Type.Object({ value_json: AnyJson }), responses: { 200: SettingResponse, 404: ErrorBody },
      handler: async ({ caller, params, body }) => {
        await settings.set(caller, params.key, body.value_json);
        return view(settings.get(caller, params.key));
      },
    }),
    route({
      method: 'DELETE', path: '/api/v2/settings/{key}', tag: 'Settings', permission: 'settings:update',
      summary: 'Remove the stored value so the default applies; answers the setting as it is then',
      params: KeyParam, responses: { 200: SettingResponse, 404: ErrorBody },
      handler: async ({ caller, params }) => {
        await settings.reset(caller, params.key);
        return view(settings.get(caller, params.key));
      },
    }),
  ];
}
