/**
 * The rules of clients as decision tables, on a store in memory: whoever changes a rule has a
 * test that runs in milliseconds. A new client from its wire fields (the API's body, the command
 * line's flags), a change of one, a rotation, and what each records: one `admin_change` in the
 * write's own transaction, none for a refusal or a change that changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { applyClientPatch, updateClient, type ClientPatch } from '../../../src/admin/client-update.ts';
import { createClient, newClientOf, removeClient } from '../../../src/admin/clients.ts';
import { AdminError, type FieldPath } from '../../../src/admin/errors.ts';
import type { ChangeActor } from '../../../src/admin/recorded-change.ts';
import { addApiScope } from '../../../src/admin/scopes.ts';
import { rotateClientSecret } from '../../../src/admin/secrets.ts';
import type { NewClientFields } from '../../../src/admin/input-schemas.ts';
import type { AuditEvent } from '../../../src/events/audit-events.ts';
import { memoryStore } from './memory-store.ts';

function setup() {
  const durable = memoryStore();
  const logged: AuditEvent[] = [];
  const actor: ChangeActor = { by: { actor: 'api', client_id: 'automation' }, logged: (event) => logged.push(event) };
  return { deps: { durable, clock: () => Date.parse('2026-11-29T00:00:00Z') }, actor, logged, durable };
}

async function refused(promise: Promise<unknown>): Promise<AdminError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof AdminError)) throw new Error(`not refused: ${String(error)}`);
  return error;
}

const fields = (extra: Record<string, unknown>) => ({ client_id: 'web', ...extra }) as NewClientFields;

describe('a new client from its wire fields', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['takes the defaults', {}, { grantTypes: ['authorization_code'], accessTokenLifetime: 3600, public: false, enabled: true, displayName: '', secretExpiresAt: null }],
    ['keeps a grant once', { grant_types: ['refresh_token', 'refresh_token'] }, { grantTypes: ['refresh_token'] }],
    ['makes a public client', { public: true }, { public: true }],
    ['reads an expiry', { secret_expires_at: '2030-01-31' }, { secretExpiresAt: new Date('2030-01-31T00:00:00Z') }],
  ])('%s', (_, extra, expected) => {
    expect(newClientOf(fields(extra))).toMatchObject(expected);
  });

  it.each<[string, Record<string, unknown>, FieldPath, boolean]>([
    ['a redirect URI with a fragment', { redirect_uris: ['https://rp.example/cb', 'https://rp.example/cb#x'] }, ['redirect_uris', 1], true],
    ['a javascript: redirect URI', { redirect_uris: ['javascript:alert(1)'] }, ['redirect_uris', 0], true],
    ['a grant it does not know', { grant_types: ['password'] }, ['grant_types', 0], true],
    ['a lifetime of 0', { access_token_lifetime: 0 }, ['access_token_lifetime'], true],
    ['a scope with a space', { scopes: ['orders read'] }, ['scopes', 0], true],
    ['an origin with a path', { cors_origins: ['https://spa.example/app'] }, ['cors_origins', 0], true],
    ['an expiry that is no date', { secret_expires_at: '2027-02-30' }, ['secret_expires_at'], true],
    ['a field it does not know', { colour: 'red' }, ['colour'], true],
    // RFC 6749 §4.4: the one place this rule is written (and the CHECK constraint mirroring it).
    ['a public client with client_credentials', { public: true, grant_types: ['client_credentials'] }, ['grant_types'], false],
    ['a public client with a secret expiry', { public: true, secret_expires_at: '2030-01-31' }, ['secret_expires_at'], false],
  ])('refuses %s, naming the field', async (_, extra, path, malformed) => {
    const { deps, actor, logged } = setup();
    const error = await refused((async () => createClient(deps, newClientOf(fields(extra)), actor))());
    expect(error.code).toBe('invalid');
    expect(error.problems[0]).toMatchObject({ path });
    expect(error.problems[0]?.malformed === true).toBe(malformed);
    expect(logged).toStrictEqual([]);
  });
});

describe('registering a client', () => {
  it('of identical creates at once, one is made with its secret, the others are conflicts, one event', async () => {
    const { deps, actor, logged, durable } = setup();
    const results = await Promise.allSettled([1, 2, 3, 4, 5, 6].map(() => createClient(deps, newClientOf(fields({})), actor)));
    expect(results.map((r) => (r.status === 'fulfilled' ? 'created' : (r.reason as AdminError).code)).sort()).toStrictEqual(['conflict', 'conflict', 'conflict', 'conflict', 'conflict', 'created']);
    expect(logged).toHaveLength(1);
    expect(durable.events.map((e) => e.type)).toStrictEqual(['admin_change']);
  });

  it('refuses a scope that is neither standard nor an API scope, and takes one that is', async () => {
    const { deps, actor } = setup();
    expect(await refused(createClient(deps, newClientOf(fields({ scopes: ['openid', 'orders.read'] })), actor))).toMatchObject({ code: 'invalid', problems: [{ path: ['scopes', 1] }] });
    await addApiScope(deps, 'orders.read', actor);
    expect((await createClient(deps, newClientOf(fields({ scopes: ['openid', 'orders.read'] })), actor)).client.record.scopes).toStrictEqual(['openid', 'orders.read']);
  });
});

describe('changing a client', () => {
  const confidential = fields({ grant_types: ['client_credentials'], secret_expires_at: '2030-01-31' });
  it.each<[string, ClientPatch, string[] | FieldPath]>([
    ['a value it already has changes nothing', { display_name: '' }, []],
    ['a new name', { display_name: 'Shop' }, ['display_name']],
    ['null clears a list', { redirect_uris: null, grant_types: ['client_credentials', 'authorization_code'] }, ['grant_types']],
  ])('%s', async (_, patch, changed) => {
    const { deps, actor, logged } = setup();
    await createClient(deps, newClientOf(confidential), actor);
    const updated = await updateClient(deps, 'web', patch, actor);
    expect(updated.changed).toStrictEqual(changed);
    expect(logged).toHaveLength(changed.length === 0 ? 1 : 2);
  });

  it.each<[string, Record<string, unknown>, ClientPatch, FieldPath]>([
    ['client_credentials for a public client', { public: true }, { grant_types: ['client_credentials'] }, ['grant_types']],
    ['a malformed redirect URI', {}, { redirect_uris: ['http://evil.example/cb'] }, ['redirect_uris', 0]],
    ['a secret (it changes by rotation only)', {}, { client_secret: 'a-secret-of-more-than-32-characters-0123' }, ['client_secret']],
  ])('refuses a change: %s', async (_, created, patch, path) => {
    const { deps, actor, logged } = setup();
    await createClient(deps, newClientOf(fields(created)), actor);
    expect(await refused(updateClient(deps, 'web', patch, actor))).toMatchObject({ code: 'invalid', problems: [{ path }] });
    expect(logged).toHaveLength(1);
  });

  it('writes at the version given only: another is stale', async () => {
    const { deps, actor } = setup();
    const { client } = await createClient(deps, newClientOf(confidential), actor);
    const first = await updateClient(deps, 'web', { display_name: 'A' }, actor, client.version);
    expect(first.client.version).toBeGreaterThan(client.version);
    expect(await refused(updateClient(deps, 'web', { display_name: 'B' }, actor, client.version))).toMatchObject({ code: 'stale' });
    expect(await refused(removeClient(deps, 'web', actor, client.version))).toMatchObject({ code: 'stale' });
  });
});

describe('a seed file\'s patch of a stored client', () => {
  const stored = { ...newClientOf(fields({ grant_types: ['client_credentials'], secret_expires_at: '2030-01-31' })), secretHash: 'sha256$x$y' };
  it.each<[string, ClientPatch, string[] | FieldPath]>([
    ['made public loses its expiry with its secret', { client_secret: null, grant_types: ['authorization_code'] }, ['client_secret', 'secret_expires_at', 'grant_types']],
    ['made public while it keeps client_credentials is refused', { client_secret: null }, ['grant_types']],
  ])('%s', (_, patch, expected) => {
    try {
      expect(applyClientPatch(stored, patch).changed).toStrictEqual(expected);
    } catch (error) {
      expect(error).toBeInstanceOf(AdminError);
      expect((error as AdminError).problems[0]?.path).toStrictEqual(expected);
    }
  });
});

describe('rotating a secret', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['of a secret without expiry names the secret', {}, ['client_secret']],
    ['of a secret that expired names its expiry too', { secret_expires_at: '2030-01-31' }, ['client_secret', 'secret_expires_at']],
  ])('%s, as the API and the command line record it alike', async (_, extra, changed) => {
    const { deps, actor, logged } = setup();
    await createClient(deps, newClientOf(fields(extra)), actor);
    await rotateClientSecret(deps, 'web', actor);
    expect(logged.at(-1)).toMatchObject({ type: 'admin_change', action: 'update', resource: 'client', fields: changed });
  });

  it('refuses a public client (it has no secret), recording nothing', async () => {
    const { deps, actor, logged } = setup();
    await createClient(deps, newClientOf(fields({ public: true })), actor);
    expect(await refused(rotateClientSecret(deps, 'web', actor))).toMatchObject({ code: 'conflict' });
    expect(logged).toHaveLength(1);
  });

  it('refuses to keep the old secret longer than 30 days', async () => {
    const { deps, actor } = setup();
    await createClient(deps, newClientOf(fields({})), actor);
    expect(await refused(rotateClientSecret(deps, 'web', actor, { keepOldForSeconds: 31 * 86400, now: 0 }))).toMatchObject({ code: 'invalid' });
  });
});
