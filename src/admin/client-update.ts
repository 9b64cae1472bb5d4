/**
 * Changing some fields of a registered client: `idp clients update`, a seed file's entry for a
 * client that exists, and later the administration API's PATCH. One rule for all of them: a field
 * the patch leaves out keeps its stored value, `null` clears it (a list to `[]`), a value sets it.
 */
import type { ClientRecord, GrantType, Versioned } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';
import { hashClientSecret, verifyClientSecret } from '../tokens/opaque.ts';
import { getVersionedClient, refuseClientProblems, refuseUnknownScopes } from './clients.ts';
import { AdminError, refuseOtherVersion, staleOrGone } from './errors.ts';
import { kept, keptList, sameValue } from './patch.ts';
import { recordedChange, type ChangeActor, type ChangeDeps } from './recorded-change.ts';
import { RULE_MESSAGES, parseInstant } from './rules.ts';
import { clientPatchSchema, parseWire } from './input-schemas.ts';

/** The fields to change, by their wire names; `client_secret: null` makes the client public. */
export interface ClientPatch {
  client_secret?: string | null | undefined;
  secret_expires_at?: string | null | undefined;
  display_name?: string | undefined;
  enabled?: boolean | undefined;
  grant_types?: readonly string[] | null | undefined;
  scopes?: readonly string[] | null | undefined;
  redirect_uris?: readonly string[] | null | undefined;
  post_logout_redirect_uris?: readonly string[] | null | undefined;
  cors_origins?: readonly string[] | null | undefined;
  access_token_lifetime?: number | undefined;
  require_consent?: boolean | undefined;
}

export interface ClientChange {
  record: ClientRecord;
  /** The wire names of the fields whose stored value changes, in the order of the patch's fields. */
  changed: string[];
}

/** The stored hash to keep when the given secret still verifies against it, else a new hash. */
function secretHash(stored: string | null, given: string | null | undefined): string | null {
  if (given === undefined) return stored;
  if (given === null) return null;
  return stored !== null && verifyClientSecret(given, stored) ? stored : hashClientSecret(given);
}

function expiry(existing: ClientRecord, patch: ClientPatch, hash: string | null): Date | null {
  // The expiry belonged to the secret: a client made public loses it with the secret.
  if (hash === null && patch.secret_expires_at === undefined) return null;
  const given = patch.secret_expires_at;
  if (given === undefined) return existing.secretExpiresAt;
  if (given === null) return null;
  const at = parseInstant(given);
  if (!at) throw new AdminError('invalid', `client ${existing.clientId}: secret_expires_at ${RULE_MESSAGES.instant}`, [{ path: ['secret_expires_at'], message: RULE_MESSAGES.instant }]);
  return at;
}

function merged(existing: ClientRecord, patch: ClientPatch): ClientRecord {
  const hash = secretHash(existing.secretHash, patch.client_secret);
  return {
    clientId: existing.clientId,
    displayName: kept(existing.displayName, patch.display_name),
    enabled: kept(existing.enabled, patch.enabled),
    secretHash: hash,
    secretExpiresAt: expiry(existing, patch, hash),
    grantTypes: keptList(existing.grantTypes, patch.grant_types) as GrantType[],
    scopes: keptList(existing.scopes, patch.scopes),
    redirectUris: keptList(existing.redirectUris, patch.redirect_uris),
    postLogoutRedirectUris: keptList(existing.postLogoutRedirectUris, patch.post_logout_redirect_uris),
    corsOrigins: keptList(existing.corsOrigins, patch.cors_origins),
    accessTokenLifetime: kept(existing.accessTokenLifetime, patch.access_token_lifetime),
    requireConsent: kept(existing.requireConsent, patch.require_consent),
    // A secret set by hand may replace one that leaked: the previous one of a rotation ends with it.
    ...(existing.previousSecret && hash === existing.secretHash ? { previousSecret: existing.previousSecret } : {}),
  };
}

// The previous secret of a rotation is no field of a patch: it is kept while the secret is (README "Seed file").
const WIRE_NAMES: Record<Exclude<keyof ClientRecord, 'clientId' | 'previousSecret'>, string> = {
  secretHash: 'client_secret', secretExpiresAt: 'secret_expires_at', displayName: 'display_name', enabled: 'enabled',
  grantTypes: 'grant_types', scopes: 'scopes', redirectUris: 'redirect_uris', postLogoutRedirectUris: 'post_logout_redirect_uris',
  corsOrigins: 'cors_origins', accessTokenLifetime: 'access_token_lifetime', requireConsent: 'require_consent',
};

/** The client after the patch and the fields it changes; an AdminError when the result breaks a rule. */
export function applyClientPatch(existing: ClientRecord, patch: ClientPatch): ClientChange {
  const record = merged(existing, patch);
  refuseClientProblems({ ...record, public: record.secretHash === null });
  return { record, changed: changedFields(existing, record) };
}

/** The wire names of the fields whose stored value differs, in the order of the patch's fields. */
export function changedFields(before: ClientRecord, after: ClientRecord): string[] {
  return (Object.keys(WIRE_NAMES) as (keyof typeof WIRE_NAMES)[]).filter((key) => !sameValue(before[key], after[key])).map((key) => WIRE_NAMES[key]);
}

/**
 * Writes the changed columns only (an unchanged client is not written, and no instance is
 * notified); with `ifVersion`, only while the row is still at that version. Returns the client
 * as stored, with its version.
 */
export async function writeClientChange(tx: DurableStore, change: ClientChange, ifVersion?: number): Promise<Versioned<ClientRecord>> {
  const columns: Parameters<DurableStore['clients']['update']>[1] = Object.fromEntries(
    (Object.keys(WIRE_NAMES) as (keyof typeof WIRE_NAMES)[]).filter((key) => change.changed.includes(WIRE_NAMES[key])).map((key) => [key, change.record[key]]),
  );
  if (change.changed.includes('client_secret')) columns.previousSecret = change.record.previousSecret ?? null;
  const written = await tx.clients.change(change.record.clientId, columns, ifVersion);
  if (written) return written;
  if (ifVersion === undefined) throw new AdminError('not_found', `no client with id ${change.record.clientId}`);
  throw staleOrGone((await tx.clients.get(change.record.clientId)) !== undefined, `client ${change.record.clientId}`);
}

export interface ClientUpdated {
  kind: 'updated' | 'unchanged';
  client: Versioned<ClientRecord>;
  changed: string[];
}

/**
 * Changes a client as `decide` says from the client as stored (read in the change's transaction):
 * the one write of every client change (a patch, enabling, a new secret).
 */
export async function changeClient(deps: ChangeDeps, id: string, actor: ChangeActor, decide: (tx: DurableStore, existing: Versioned<ClientRecord>) => Promise<ClientChange>, ifVersion?: number): Promise<ClientUpdated> {
  return recordedChange(deps, actor, `client ${id}`, async (tx) => {
    const existing = await getVersionedClient(tx, id);
    refuseOtherVersion(existing.version, ifVersion, `client ${id}`);
    const change = await decide(tx, existing);
    const client = await writeClientChange(tx, change, ifVersion);
    const result: ClientUpdated = { kind: change.changed.length === 0 ? 'unchanged' : 'updated', client, changed: change.changed };
    return { result, change: change.changed.length === 0 ? undefined : { action: 'update', resource: 'client', resource_id: id, fields: change.changed } };
  });
}

/** With `ifVersion` (the API's If-Match), the change is made only to the client at that version. */
export async function updateClient(deps: ChangeDeps, id: string, patch: ClientPatch, actor: ChangeActor, ifVersion?: number): Promise<ClientUpdated> {
  parseWire(clientPatchSchema, patch, `client ${id}`);
  return changeClient(deps, id, actor, async (tx, { record }) => {
    const change = applyClientPatch(record, patch);
    await refuseUnknownScopes(tx, id, patch.scopes ?? []);
    return change;
  }, ifVersion);
}
