/** A client's form fields <-> the API's wire fields (the clients table's columns). */
import type { ClientWire } from '../../admin/wire-schemas.ts';
import { checked, linesOf, numberOf, textOf, type FormBody } from './forms.ts';

const LISTS = ['grant_types', 'scopes', 'redirect_uris', 'post_logout_redirect_uris', 'cors_origins'] as const;

/** What a client's form shows: its settings, a list as one value per line. */
export function clientFormValues(client: ClientWire): Record<string, unknown> {
  return {
    client_id: client.client_id,
    display_name: client.display_name,
    enabled: client.enabled,
    secret_expires_at: client.secret_expires_at ?? '',
    ...Object.fromEntries(LISTS.map((name) => [name, client[name].join('\n')])),
    access_token_lifetime: client.access_token_lifetime,
    require_consent: client.require_consent,
  };
}

/** The values of "Create client" before anything is typed: the defaults of section 4. */
export const NEW_CLIENT_VALUES = { enabled: true, grant_types: 'authorization_code', scopes: 'openid', access_token_lifetime: 3600, require_consent: false };

/** What was typed, to show again beside its refusals. */
export function typedValues(form: FormBody, creating: boolean): Record<string, unknown> {
  return {
    ...(creating ? { client_id: textOf(form, 'client_id') ?? '', public: checked(form, 'public') } : {}),
    display_name: textOf(form, 'display_name') ?? '',
    enabled: checked(form, 'enabled'),
    secret_expires_at: textOf(form, 'secret_expires_at') ?? '',
    ...Object.fromEntries(LISTS.map((name) => [name, linesOf(form, name).join('\n')])),
    access_token_lifetime: textOf(form, 'access_token_lifetime') ?? '',
    require_consent: checked(form, 'require_consent'),
  };
}

/** The posted settings as the API's body: a POST /clients (creating) or a merge patch holding every field. */
export function clientBodyOf(form: FormBody, creating: boolean): Record<string, unknown> {
  const expires = textOf(form, 'secret_expires_at')?.trim();
  const lifetime = numberOf(form, 'access_token_lifetime');
  return {
    ...(creating ? { client_id: (textOf(form, 'client_id') ?? '').trim(), public: checked(form, 'public') } : {}),
    display_name: textOf(form, 'display_name') ?? '',
    enabled: checked(form, 'enabled'),
    ...(creating && checked(form, 'public') && !expires ? {} : { secret_expires_at: expires ? expires : null }),
    ...Object.fromEntries(LISTS.map((name) => [name, linesOf(form, name)])),
    ...(lifetime === undefined ? {} : { access_token_lifetime: lifetime }),
    require_consent: checked(form, 'require_consent'),
  };
}
