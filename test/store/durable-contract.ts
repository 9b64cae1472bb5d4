/**
 * The behaviour every DurableStore backend must share, registered as one vitest `describe` per
 * backend (the pattern of ory/hydra's `client/manager_test_helpers.go`, run per database in
 * `persistence/sql/persister_test.go`). `durable.test.ts` runs it on PostgreSQL and PGlite.
 *
 * The suite shares one store between its tests: every test uses ids of its own, and the signing
 * key tests, which need the whole `signing_keys` table, run in order inside one `describe`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import type { Clock } from '../../src/clock.ts';
import type { ClientRecord, UserInput } from '../../src/store/records.ts';
import type { ChangeEvent, DurableStore, SigningKeyRepository } from '../../src/store/types.ts';
import { createKeyManager, type KeyManager } from '../../src/tokens/keys.ts';
import { hashClientSecret } from '../../src/tokens/opaque.ts';
import { deriveKey, open as openSealed } from '../../src/tokens/secret-box.ts';
import { factorsContract } from './factors-contract.ts';
import { recoveryCodesContract } from './recovery-codes-contract.ts';

export interface OpenedDurableStore {
  /** A store on an empty database, already migrated. */
  store: DurableStore;
  /** What the first `migrate()` of that fresh database returned. */
  migrated: string[];
  /** Closes the store (even when already closed) and drops whatever `open` created. */
  cleanup(): Promise<void>;
  /**
   * Another instance on the same database (migrated already), when the backend can be shared
   * (PostgreSQL; not PGlite, which one process owns). The caller closes it.
   */
  openAnother?: () => Promise<DurableStore>;
}

/** A fresh id with a readable prefix, so that tests sharing one store never collide. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export function sampleClient(overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    clientId: uniqueId('client'),
    displayName: 'Sample app',
    enabled: true,
    secretHash: hashClientSecret('s'.repeat(43)),
    secretExpiresAt: new Date('2030-01-02T03:04:05.000Z'),
    grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
    scopes: ['openid', 'profile', 'api:read'],
    redirectUris: ['https://app.example/callback', 'com.example.app:/oauth2redirect', 'http://localhost:8080/cb?x=1'],
    postLogoutRedirectUris: ['https://app.example/'],
    corsOrigins: ['https://app.example', 'http://localhost:3000', 'https://[::1]:8443'],
    accessTokenLifetime: 600,
    requireConsent: true,
    ...overrides,
  };
}

export function sampleUser(overrides: Partial<UserInput> = {}): UserInput {
  const id = overrides.id ?? uniqueId('user');
  return {
    id,
    source: 'local',
    subject: id,
    username: uniqueId('ada'),
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo',
    givenName: 'Ada',
    familyName: 'Lovelace',
    name: 'Ada Lovelace',
    email: 'ada@example.test',
    emailVerified: true,
    phoneNumber: '+44 20 7946 0000',
    phoneNumberVerified: false,
    roles: ['admin', 'user'],
    locked: false,
    mustChangePassword: false,
    mustEnrolMfa: false,
    ...overrides,
  };
}

/** Records the change events of a store from now on. */
export function recordChanges(store: DurableStore) {
  const events: ChangeEvent[] = [];
  const stop = store.onChange((event) => events.push(event));
  return {
    events,
    stop,
    /** Resolves with the first matching event and how long it took; rejects after `timeoutMs`. */
    async waitFor(match: (event: ChangeEvent) => boolean, timeoutMs = 1000): Promise<{ event: ChangeEvent; elapsed: number }> {
      const started = performance.now();
      for (;;) {
        const event = events.find(match);
        const elapsed = performance.now() - started;
        if (event) return { event, elapsed };
        if (elapsed > timeoutMs) throw new Error(`no matching change event within ${timeoutMs} ms; got ${JSON.stringify(events)}`);
        await sleep(10);
      }
    },
  };
}

async function waitUntil(condition: () => boolean, timeoutMs = 1000): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A bad value for one column, and the constraint of the `clients` table that must refuse it. */
interface BadClientCase {
  what: string;
  change: Partial<Omit<ClientRecord, 'clientId'>>;
  constraint: string;
}

const BAD_CLIENTS: BadClientCase[] = [
  { what: 'an unknown grant type', change: { grantTypes: ['authorization_code', 'implicit' as never] }, constraint: 'clients_grant_types_known' },
  { what: 'a redirect URI with a fragment', change: { redirectUris: ['https://app.example/callback#frag'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a relative redirect URI', change: { redirectUris: ['/callback'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a redirect URI without a host', change: { redirectUris: ['https:///callback'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'whitespace in a redirect URI', change: { redirectUris: ['https://app.example/call back'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a trailing newline in a redirect URI', change: { redirectUris: ['https://app.example/callback\n'] }, constraint: 'clients_redirect_uris_format' },
  // RFC 9700 §2.1, RFC 8252 §7: https, loopback http, or a private-use scheme with a period.
  { what: 'a javascript: redirect URI', change: { redirectUris: ['javascript:alert(1)'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a data: redirect URI', change: { redirectUris: ['data:text/html,<script>alert(1)</script>'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a vbscript: redirect URI', change: { redirectUris: ['VBScript:msgbox(1)'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a file: redirect URI', change: { redirectUris: ['file:///etc/passwd'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'an http redirect URI to another host', change: { redirectUris: ['http://app.example/callback'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'an http redirect URI to a host that only starts like loopback', change: { redirectUris: ['http://127.0.0.1.evil.example/cb'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a scheme without a period', change: { redirectUris: ['myapp://callback'] }, constraint: 'clients_redirect_uris_format' },
  { what: 'a javascript: post-logout redirect URI', change: { postLogoutRedirectUris: ['javascript:alert(1)'] }, constraint: 'clients_post_logout_redirect_uris_format' },
  { what: 'a post-logout redirect URI with a fragment', change: { postLogoutRedirectUris: ['https://app.example/bye#x'] }, constraint: 'clients_post_logout_redirect_uris_format' },
  { what: 'whitespace in a post-logout redirect URI', change: { postLogoutRedirectUris: ['https://app.example/ bye'] }, constraint: 'clients_post_logout_redirect_uris_format' },
  { what: 'a cors origin with a path', change: { corsOrigins: ['https://app.example/app'] }, constraint: 'clients_cors_origins_format' },
  { what: 'a cors origin with a trailing slash', change: { corsOrigins: ['https://app.example/'] }, constraint: 'clients_cors_origins_format' },
  { what: 'a zero access_token_lifetime', change: { accessTokenLifetime: 0 }, constraint: 'clients_access_token_lifetime_positive' },
  { what: 'a negative access_token_lifetime', change: { accessTokenLifetime: -60 }, constraint: 'clients_access_token_lifetime_positive' },
  { what: 'a scope with a space', change: { scopes: ['openid', 'read write'] }, constraint: 'clients_scopes_format' },
  { what: 'an empty scope', change: { scopes: [''] }, constraint: 'clients_scopes_format' },
  { what: 'client_credentials on a public client', change: { secretHash: null, grantTypes: ['client_credentials'] }, constraint: 'clients_client_credentials_confidential' },
  { what: 'a secret_hash that is not a hash', change: { secretHash: 'correct horse battery staple' }, constraint: 'clients_secret_hash_format' },
  { what: 'a secret_hash with a truncated digest', change: { secretHash: hashClientSecret('x'.repeat(40)).slice(0, -1) }, constraint: 'clients_secret_hash_format' },
];

const violates = (constraint: string) => new RegExp(`violates check constraint "${constraint}"`);

export function durableContract(name: string, open: () => Promise<OpenedDurableStore>): void {
  describe(`DurableStore contract: ${name}`, () => {
    let opened: OpenedDurableStore | undefined;
    let store: DurableStore;

    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.cleanup();
    });

    describe('migrations', () => {
      it('applied every migration on the fresh database, and migrating again applies none', async () => {
        expect(opened?.migrated).toEqual(Object.keys(migrations));
        expect(await store.migrate()).toEqual([]);
        expect(await store.migrate()).toEqual([]);
      });
    });

    describe('ping', () => {
      it('resolves while the database answers and rejects once the store is closed', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
        const other = await open();
        try {
          await expect(other.store.ping()).resolves.toBeUndefined();
          await other.store.close();
          await expect(other.store.ping()).rejects.toThrow();
        } finally {
          await other.cleanup();
        }
      });
    });

    describe('poolStats (PostgreSQL only, for the metrics)', () => {
      it('counts the connections in use, and a waiting query while they are all busy', async () => {
        if (!store.poolStats) {
          expect(store.kind).toBe('embedded');
          return;
        }
        expect(store.poolStats()).toMatchObject({ inUse: expect.any(Number), waiting: 0 });
        // A transaction holds its connection until it ends.
        let inside = { inUse: 0, waiting: 0 };
        await store.transaction(async () => {
          inside = store.poolStats?.() ?? inside;
        });
        expect(inside.inUse).toBeGreaterThanOrEqual(1);
      });
    });

    describe('serverTime', () => {
      it("answers the database server's clock, within a second of this machine's", async () => {
        const before = Date.now();
        const time = await store.serverTime();
        expect(time).toBeInstanceOf(Date);
        expect(time.getTime()).toBeGreaterThan(before - 1000);
        expect(time.getTime()).toBeLessThan(Date.now() + 1000);
      });
    });

    describe('clients', () => {
      it('round-trips every field', async () => {
        const client = sampleClient();
        expect(await store.clients.upsert(client)).toBe('created');
        expect(await store.clients.get(client.clientId)).toEqual(client);
        expect(await store.clients.get(uniqueId('missing'))).toBeUndefined();
      });

      it('accepts a public client with no secret and no expiry', async () => {
        const client = sampleClient({ secretHash: null, secretExpiresAt: null, grantTypes: ['authorization_code'], corsOrigins: [], postLogoutRedirectUris: [] });
        expect(await store.clients.upsert(client)).toBe('created');
        expect(await store.clients.get(client.clientId)).toEqual(client);
      });

      it('upsert says created, then unchanged, then updated, then unchanged', async () => {
        const client = sampleClient();
        expect(await store.clients.upsert(client)).toBe('created');
        expect(await store.clients.upsert({ ...client })).toBe('unchanged');
        expect(await store.clients.upsert({ ...client, displayName: 'Renamed' })).toBe('updated');
        expect(await store.clients.upsert({ ...client, displayName: 'Renamed' })).toBe('unchanged');
        // Every column takes part in the comparison: arrays by order, dates by instant, nulls too.
        expect(await store.clients.upsert({ ...client, displayName: 'Renamed', scopes: [...client.scopes].reverse() })).toBe('updated');
        expect(await store.clients.upsert({ ...client, displayName: 'Renamed', scopes: [...client.scopes].reverse(), secretExpiresAt: null })).toBe('updated');
        expect(await store.clients.upsert({ ...client, displayName: 'Renamed', scopes: [...client.scopes].reverse(), secretExpiresAt: null })).toBe('unchanged');
        expect(await store.clients.get(client.clientId)).toEqual({ ...client, displayName: 'Renamed', scopes: [...client.scopes].reverse(), secretExpiresAt: null });
      });

      it('update changes only the given fields, and says false for an unknown client', async () => {
        const client = sampleClient();
        await store.clients.upsert(client);
        expect(await store.clients.update(client.clientId, { displayName: 'Partial', enabled: false, redirectUris: ['https://other.example/cb'] })).toBe(true);
        expect(await store.clients.get(client.clientId)).toEqual({ ...client, displayName: 'Partial', enabled: false, redirectUris: ['https://other.example/cb'] });
        // null is a value (make the client public), unlike an absent field.
        expect(await store.clients.update(client.clientId, { secretHash: null, secretExpiresAt: null, grantTypes: ['authorization_code'] })).toBe(true);
        expect(await store.clients.get(client.clientId)).toMatchObject({ secretHash: null, secretExpiresAt: null, grantTypes: ['authorization_code'], displayName: 'Partial' });
        expect(await store.clients.update(client.clientId, {})).toBe(true);
        expect(await store.clients.update(uniqueId('missing'), { displayName: 'x' })).toBe(false);
        expect(await store.clients.update(uniqueId('missing'), {})).toBe(false);
      });

      it('list returns every client ordered by id, count counts them, remove removes once', async () => {
        const before = await store.clients.count();
        const prefix = uniqueId('listed');
        const clients = ['c', 'a', 'b'].map((suffix) => sampleClient({ clientId: `${prefix}-${suffix}` }));
        for (const client of clients) await store.clients.upsert(client);
        expect(await store.clients.count()).toBe(before + 3);
        const listed = await store.clients.list();
        expect(listed).toHaveLength(before + 3);
        expect(listed.map((c) => c.clientId)).toEqual([...listed.map((c) => c.clientId)].sort());
        expect(listed.filter((c) => c.clientId.startsWith(prefix)).map((c) => c.clientId)).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
        expect(listed.find((c) => c.clientId === `${prefix}-a`)).toEqual(clients[1]);

        expect(await store.clients.remove(`${prefix}-a`)).toBe(true);
        expect(await store.clients.remove(`${prefix}-a`)).toBe(false);
        expect(await store.clients.get(`${prefix}-a`)).toBeUndefined();
        expect(await store.clients.count()).toBe(before + 2);
      });

      it('gives a row version that every write changes, writes at a version only while it is current, pages by id', async () => {
        const prefix = uniqueId('versioned');
        const client = sampleClient({ clientId: `${prefix}-b` });
        await store.clients.upsert(client);
        const first = await store.clients.getVersioned(client.clientId);
        expect(first?.record).toEqual(client);
        expect(await store.clients.update(client.clientId, { displayName: 'v2' }, first?.version)).toBe(true);
        const second = await store.clients.getVersioned(client.clientId);
        expect(second?.version).not.toBe(first?.version);
        expect(await store.clients.update(client.clientId, { displayName: 'stale' }, first?.version)).toBe(false);
        expect(await store.clients.remove(client.clientId, first?.version)).toBe(false);
        expect((await store.clients.get(client.clientId))?.displayName).toBe('v2');
        for (const suffix of ['a', 'c', 'd']) await store.clients.upsert(sampleClient({ clientId: `${prefix}-${suffix}` }));
        const page = await store.clients.page({ after: `${prefix}-a`, limit: 2 });
        expect(page.map((c) => c.clientId)).toEqual([`${prefix}-b`, `${prefix}-c`]);
        expect(await store.clients.remove(client.clientId, second?.version)).toBe(true);
      });

      it('inserts a client once (undefined, nothing written, for a taken id) and changes it returning the row at its new version', async () => {
        const client = sampleClient();
        const inserted = await store.clients.insert(client);
        expect(inserted).toEqual(await store.clients.getVersioned(client.clientId));
        expect(await store.clients.insert({ ...client, displayName: 'second' })).toBeUndefined();
        const changed = await store.clients.change(client.clientId, { displayName: 'changed' }, inserted?.version);
        expect(changed?.record.displayName).toBe('changed');
        expect(changed).toEqual(await store.clients.getVersioned(client.clientId));
        expect(await store.clients.change(client.clientId, { displayName: 'stale' }, inserted?.version)).toBeUndefined();
        expect(await store.clients.change(uniqueId('missing'), { displayName: 'x' })).toBeUndefined();
      });

      describe('the constraints of the clients table', () => {
        it('accept https, loopback http and private-use redirect URIs (RFC 8252 §7)', async () => {
          const uris = ['https://app.example/cb', 'http://localhost:8080/cb', 'http://127.0.0.1:51004/cb', 'http://[::1]/cb', 'com.example.app:/oauth2redirect', 'HTTPS://APP.EXAMPLE/CB'];
          const client = sampleClient({ redirectUris: uris, postLogoutRedirectUris: uris });
          expect(await store.clients.upsert(client)).toBe('created');
          expect(await store.clients.get(client.clientId)).toEqual(client);
        });

        it.each(BAD_CLIENTS)('refuse $what, on insert and on change, keeping the previous row', async ({ change, constraint }) => {
          const fresh = sampleClient({ ...change });
          await expect(store.clients.upsert(fresh)).rejects.toThrow(violates(constraint));
          expect(await store.clients.get(fresh.clientId)).toBeUndefined();

          const good = sampleClient();
          expect(await store.clients.upsert(good)).toBe('created');
          await expect(store.clients.upsert({ ...good, ...change })).rejects.toThrow(violates(constraint));
          expect(await store.clients.get(good.clientId)).toEqual(good);
          await expect(store.clients.update(good.clientId, change)).rejects.toThrow(violates(constraint));
          expect(await store.clients.get(good.clientId)).toEqual(good);
        });

        it.each([
          ['a client id with a space', 'bad id'],
          ['an empty client id', ''],
          ['a client id with a non-ASCII character', 'cliënt'],
        ])('refuse %s', async (_what, clientId) => {
          await expect(store.clients.upsert(sampleClient({ clientId }))).rejects.toThrow(violates('clients_client_id_format'));
          expect(await store.clients.get(clientId)).toBeUndefined();
        });
      });
    });

    describe('users', () => {
      it('round-trips every field and keeps the timestamps', async () => {
        const user = sampleUser({ mustEnrolMfa: true });
        expect(await store.users.upsert(user)).toBe('created');
        const stored = await store.users.getById(user.id);
        expect(stored).toEqual({ ...user, factors: [], createdAt: expect.any(Date), updatedAt: expect.any(Date) });
        expect(Math.abs(stored!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
        expect(await store.users.getById(uniqueId('missing'))).toBeUndefined();
      });

      it('upsert matches the username case-insensitively and keeps the id and subject of the existing row', async () => {
        // A directory's names keep their case; a local one is stored canonical (trimmed, lower case).
        const user = sampleUser({ source: 'ldap', username: uniqueId('Grace') });
        expect(await store.users.upsert(user)).toBe('created');
        expect(await store.users.upsert({ ...user })).toBe('unchanged');
        const count = await store.users.count();

        const again = { ...user, id: uniqueId('other'), subject: 'ignored', username: user.username.toUpperCase(), email: 'grace@example.test' };
        expect(await store.users.upsert(again)).toBe('updated');
        expect(await store.users.count()).toBe(count);
        expect(await store.users.getById(again.id)).toBeUndefined();
        const stored = await store.users.getByUsername('ldap', user.username.toLowerCase());
        expect(stored).toMatchObject({ id: user.id, username: again.username, email: 'grace@example.test' });
        // A local user keeps its id as subject.
        const local = sampleUser();
        await store.users.upsert(local);
        expect(await store.users.upsert({ ...local, id: uniqueId('other'), subject: 'ignored', email: 'grace@example.test' })).toBe('updated');
        expect(await store.users.getByUsername('local', local.username)).toMatchObject({ id: local.id, subject: local.id, email: 'grace@example.test' });
      });

      it('insertMany adds a batch in one statement, or none of it when one exists; getManyByUsername finds a batch by name, case aside', async () => {
        const batch = [sampleUser(), sampleUser(), sampleUser({ subject: uniqueId('kept-sub') })];
        await store.users.insertMany(batch);
        expect(await store.users.getById(batch[2]!.id)).toMatchObject({ subject: batch[2]!.subject });
        const found = await store.users.getManyByUsername('local', [batch[0]!.username.toUpperCase(), batch[2]!.username, uniqueId('nobody')]);
        expect(found.map((u) => u.id).sort()).toEqual([batch[0]!.id, batch[2]!.id].sort());
        expect(await store.users.getManyByUsername('ldap', [batch[0]!.username])).toEqual([]);
        const fresh = sampleUser();
        await expect(store.users.insertMany([fresh, { ...batch[1]!, id: uniqueId('again') }])).rejects.toThrow();
        expect(await store.users.getById(fresh.id)).toBeUndefined();
      });

      it('getByUsername is case-insensitive and looks within one source only', async () => {
        const user = sampleUser({ source: 'ldap', username: uniqueId('MixedCase') });
        await store.users.upsert(user);
        expect((await store.users.getByUsername('ldap', user.username.toLowerCase()))?.id).toBe(user.id);
        expect((await store.users.getByUsername('ldap', user.username.toUpperCase()))?.id).toBe(user.id);
        expect(await store.users.getByUsername('local', user.username)).toBeUndefined();
        expect(await store.users.getByUsername('ldap', `${user.username}x`)).toBeUndefined();
      });

      it('inserts a user once (undefined for another spelling of a taken name) and changes them returning the row at its new version', async () => {
        const user = sampleUser({ source: 'ldap', username: uniqueId('insert') });
        const inserted = await store.users.insert(user);
        expect(inserted).toEqual(await store.users.getVersioned(user.id));
        expect(await store.users.insert({ ...user, id: uniqueId('other'), username: user.username.toUpperCase() })).toBeUndefined();
        const changed = await store.users.change(user.id, { givenName: 'Changed' }, inserted?.version);
        expect(changed?.record.givenName).toBe('Changed');
        expect(changed).toEqual(await store.users.getVersioned(user.id));
        expect(await store.users.change(user.id, { givenName: 'Stale' }, inserted?.version)).toBeUndefined();
      });

      it('refuses a local username not in the canonical form sign-in looks it up by (trimmed, lower case)', async () => {
        const name = uniqueId('eve');
        for (const spelling of [name.toUpperCase(), ` ${name}`, `${name} `, `${name}\u00a0`, `\t${name}`]) {
          await expect(store.users.upsert(sampleUser({ username: spelling })), JSON.stringify(spelling)).rejects.toMatchObject({ constraint: 'users_local_username_canonical' });
        }
        expect(await store.users.getByUsername('local', name)).toBeUndefined();
        // Other sources keep the names their directory or provider gives.
        expect(await store.users.upsert(sampleUser({ source: 'oidc', username: name.toUpperCase() }))).toBe('created');
      });

      // The administrative rules count on these (test/unit/admin/user-rules.test.ts's memory store does the same).
      it('refuses renaming a user to another spelling of a taken name (the unique index) and a local name with an invisible character', async () => {
        const [taken, other] = [sampleUser(), sampleUser()];
        const [directory, colleague] = [sampleUser({ source: 'ldap', username: uniqueId('Grace') }), sampleUser({ source: 'ldap' })];
        for (const user of [taken, other, directory, colleague]) await store.users.insert(user);
        await expect(store.users.change(other.id, { username: taken.username })).rejects.toMatchObject({ code: '23505' });
        await expect(store.users.change(colleague.id, { username: directory.username.toLowerCase() })).rejects.toMatchObject({ code: '23505' });
        await expect(store.users.change(other.id, { username: `${taken.username}\u200b` })).rejects.toMatchObject({ code: '23514', constraint: 'users_local_username_visible' });
        expect((await store.users.getById(other.id))?.username).toBe(other.username);
        expect((await store.users.getById(colleague.id))?.username).toBe(colleague.username);
      });

      it('findByEmail is case-insensitive, within one source, and finds at most two', async () => {
        const address = `${uniqueId('Shared')}@Example.test`;
        const first = sampleUser({ email: address });
        await store.users.upsert(first);
        expect((await store.users.findByEmail('local', address.toLowerCase())).map((u) => u.id)).toEqual([first.id]);
        expect(await store.users.findByEmail('ldap', address)).toEqual([]);
        expect(await store.users.findByEmail('local', `x${address}`)).toEqual([]);
        await store.users.upsert(sampleUser({ email: address.toUpperCase() }));
        await store.users.upsert(sampleUser({ email: address }));
        expect(await store.users.findByEmail('local', address)).toHaveLength(2);
      });

      it('getBySubject finds a user by the subject of its source', async () => {
        const subject = `uid=${uniqueId('ada')},ou=people,dc=example,dc=test`;
        const user = sampleUser({ source: 'ldap', subject, passwordHash: null });
        expect(await store.users.upsert(user)).toBe('created');
        expect((await store.users.getBySubject('ldap', subject))?.id).toBe(user.id);
        expect(await store.users.getBySubject('local', subject)).toBeUndefined();
        expect(await store.users.getBySubject('ldap', subject.toUpperCase())).toBeUndefined();
        // An upsert of a directory user may change its subject (it is not the id).
        const moved = `${subject},o=moved`;
        expect(await store.users.upsert({ ...user, subject: moved })).toBe('updated');
        expect((await store.users.getBySubject('ldap', moved))?.id).toBe(user.id);
      });

      it('update changes the given fields, bumps updated_at and keeps created_at', async () => {
        const user = sampleUser();
        await store.users.upsert(user);
        const before = (await store.users.getById(user.id))!;
        await sleep(15);
        expect(await store.users.update(user.id, { locked: true, roles: ['auditor'], phoneNumber: null })).toBe(true);
        const after = (await store.users.getById(user.id))!;
        expect(after).toEqual({ ...before, locked: true, roles: ['auditor'], phoneNumber: null, updatedAt: after.updatedAt });
        expect(after.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
        expect(after.createdAt).toEqual(before.createdAt);
        expect(await store.users.update(uniqueId('missing'), { locked: true })).toBe(false);
      });

      it('list and count include every user', async () => {
        const before = await store.users.count();
        const users = [sampleUser(), sampleUser({ source: 'oidc', subject: uniqueId('sub'), passwordHash: null })];
        for (const user of users) await store.users.upsert(user);
        expect(await store.users.count()).toBe(before + 2);
        const listed = await store.users.list();
        expect(listed).toHaveLength(before + 2);
        expect(listed.map((u) => u.id)).toEqual(expect.arrayContaining(users.map((u) => u.id)));
      });

      it('locked gives the first locked users in username order and how many are locked', async () => {
        const before = await store.users.locked(1000);
        const made = [sampleUser({ locked: true }), sampleUser({ locked: true }), sampleUser()];
        for (const user of made) await store.users.upsert(user);
        const all = await store.users.locked(1000);
        expect(all.count).toBe(before.count + 2);
        expect(all.users.every((u) => u.locked)).toBe(true);
        expect(all.users.map((u) => u.id)).toEqual(expect.arrayContaining([made[0]?.id, made[1]?.id]));
        expect(all.users.map((u) => u.id)).not.toContain(made[2]?.id);
        const names = all.users.map((u) => u.username.toLowerCase());
        expect(names).toEqual([...names].sort());
        const first = await store.users.locked(1);
        expect(first.users).toHaveLength(1);
        expect(first.count).toBe(all.count);
      });

      it('remove deletes the user and its consents, once', async () => {
        const client = sampleClient();
        await store.clients.upsert(client);
        const user = sampleUser();
        const other = sampleUser();
        await store.users.upsert(user);
        await store.users.upsert(other);
        await store.consents.grant(user.id, client.clientId, ['openid']);
        await store.consents.grant(other.id, client.clientId, ['profile']);

        expect(await store.users.remove(user.id)).toBe(true);
        expect(await store.users.getById(user.id)).toBeUndefined();
        expect(await store.consents.get(user.id, client.clientId)).toEqual([]);
        expect(await store.consents.get(other.id, client.clientId)).toEqual(['profile']);
        expect(await store.users.remove(user.id)).toBe(false);
        // Re-creating the same id starts without the old consent.
        await store.users.upsert(user);
        expect(await store.consents.get(user.id, client.clientId)).toEqual([]);
      });
    });

    factorsContract(() => store);
    recoveryCodesContract(() => store);

    describe('api scopes', () => {
      it('add says true then false; remove says true then false', async () => {
        const scope = `api:${uniqueId('orders')}`;
        expect(await store.apiScopes.add(scope)).toBe(true);
        expect(await store.apiScopes.add(scope)).toBe(false);
        expect((await store.apiScopes.list()).filter((s) => s === scope)).toEqual([scope]);
        expect(await store.apiScopes.remove(scope)).toBe(true);
        expect(await store.apiScopes.remove(scope)).toBe(false);
        expect(await store.apiScopes.list()).not.toContain(scope);
      });

      it('insert returns the new scope with its version, and undefined when it exists', async () => {
        const scope = `api:${uniqueId('inserted')}`;
        const inserted = await store.apiScopes.insert(scope);
        expect(inserted).toEqual(await store.apiScopes.get(scope));
        expect(await store.apiScopes.insert(scope)).toBeUndefined();
      });

      it('lists in order, and refuses a name that is not a scope token', async () => {
        const prefix = uniqueId('scope');
        for (const s of ['b', 'c', 'a']) await store.apiScopes.add(`${prefix}-${s}`);
        expect((await store.apiScopes.list()).filter((s) => s.startsWith(prefix))).toEqual([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`]);
        await expect(store.apiScopes.add('read write')).rejects.toThrow(violates('api_scopes_name_format'));
        expect(await store.apiScopes.list()).not.toContain('read write');
      });

      it('announces an added and a removed scope on the change feed (each instance drops its list)', async () => {
        const scope = `api:${uniqueId('feed')}`;
        for (const change of [() => store.apiScopes.add(scope), () => store.apiScopes.remove(scope)]) {
          const changes = recordChanges(store);
          try {
            await change();
            const { elapsed } = await changes.waitFor((e) => e.kind === 'apiScopes');
            expect(elapsed).toBeLessThan(1000);
          } finally {
            changes.stop();
          }
        }
      });
    });

    describe('consents', () => {
      it('grant adds to the earlier consent without duplicates; revoke removes it', async () => {
        const client = sampleClient();
        const otherClient = sampleClient();
        await store.clients.upsert(client);
        await store.clients.upsert(otherClient);
        const user = sampleUser();
        await store.users.upsert(user);

        expect(await store.consents.get(user.id, client.clientId)).toEqual([]);
        await store.consents.grant(user.id, client.clientId, ['openid', 'profile']);
        expect([...(await store.consents.get(user.id, client.clientId))].sort()).toEqual(['openid', 'profile']);
        await store.consents.grant(user.id, client.clientId, ['profile', 'email', 'email']);
        expect([...(await store.consents.get(user.id, client.clientId))].sort()).toEqual(['email', 'openid', 'profile']);
        await store.consents.grant(user.id, otherClient.clientId, ['api:read']);

        await store.consents.revoke(user.id, client.clientId);
        expect(await store.consents.get(user.id, client.clientId)).toEqual([]);
        expect(await store.consents.get(user.id, otherClient.clientId)).toEqual(['api:read']);
        await expect(store.consents.revoke(user.id, client.clientId)).resolves.toBeUndefined();
      });

      it('lists a user\'s consents by client, with when they were granted', async () => {
        const [client, otherClient] = [sampleClient(), sampleClient()];
        await store.clients.upsert(client);
        await store.clients.upsert(otherClient);
        const [user, other] = [sampleUser(), sampleUser()];
        await store.users.upsert(user);
        await store.users.upsert(other);
        await store.consents.grant(user.id, client.clientId, ['openid']);
        await store.consents.grant(user.id, otherClient.clientId, ['email']);
        await store.consents.grant(other.id, client.clientId, ['profile']);
        const listed = await store.consents.listForUser(user.id);
        expect(listed.map((c) => [c.clientId, c.scopes]).sort()).toEqual([[client.clientId, ['openid']], [otherClient.clientId, ['email']]].sort());
        expect(listed.every((c) => c.grantedAt instanceof Date)).toBe(true);
        expect(await store.consents.listForUser(sampleUser().id)).toEqual([]);
      });

      it('a first grant holds no duplicates either', async () => {
        const client = sampleClient();
        await store.clients.upsert(client);
        const user = sampleUser();
        await store.users.upsert(user);
        await store.consents.grant(user.id, client.clientId, ['openid', 'openid', 'email']);
        expect([...(await store.consents.get(user.id, client.clientId))].sort()).toEqual(['email', 'openid']);
      });

      it('removing the client removes the consents given to it', async () => {
        const client = sampleClient();
        await store.clients.upsert(client);
        const user = sampleUser();
        await store.users.upsert(user);
        await store.consents.grant(user.id, client.clientId, ['openid']);
        await store.clients.remove(client.clientId);
        expect(await store.consents.get(user.id, client.clientId)).toEqual([]);
      });
    });

    describe('refresh token families', () => {
      const at = (seconds: number) => new Date(Date.UTC(2030, 0, 1) + seconds * 1000);
      async function family(overrides: { expiresAt?: Date; tokenExpiresAt?: Date } = {}) {
        const client = sampleClient();
        await store.clients.upsert(client);
        const user = sampleUser();
        await store.users.upsert(user);
        const id = randomUUID();
        await store.refreshTokens.createFamily({
          id, clientId: client.clientId, userId: user.id, scopes: ['openid', 'offline_access'], claims: { id_token: ['email'], userinfo: [] },
          allowedScopes: ['openid', 'email', 'offline_access'], nonce: 'n-1', authTime: at(0), amr: ['pwd', 'mfa'],
          expiresAt: overrides.expiresAt ?? at(86_400), tokenSalt: randomBytes(32), tokenExpiresAt: overrides.tokenExpiresAt ?? at(3600), accessExpiresAt: at(600),
        });
        return { id, clientId: client.clientId, userId: user.id };
      }
      const advance = (f: { id: string; clientId: string }, from: number, seconds: number, graceSeconds = 10) => store.refreshTokens.advance({
        familyId: f.id, clientId: f.clientId, from, issuedAt: at(seconds), tokenExpiresAt: at(seconds + 3600),
        accessExpiresAt: at(seconds + 600), now: at(seconds), graceSince: at(seconds - graceSeconds),
      });

      it('creates a family at generation 0 and reads it back whole', async () => {
        const f = await family();
        const stored = await store.refreshTokens.get(f.id);
        expect(stored).toMatchObject({
          id: f.id, clientId: f.clientId, userId: f.userId, scopes: ['openid', 'offline_access'], claims: { id_token: ['email'], userinfo: [] },
          nonce: 'n-1', authTime: at(0), amr: ['pwd', 'mfa'], expiresAt: at(86_400), revokedAt: null,
          generation: 0, rotatedAt: null, earlierRotations: [], tokenExpiresAt: at(3600), accessExpiresAt: at(600),
        });
        expect(stored?.tokenSalt).toHaveLength(32);
        expect(await store.refreshTokens.get(randomUUID())).toBeUndefined();
        expect(await store.refreshTokens.findLegacy('no-such-hash')).toBeUndefined();
      });

      it('advances a family from one generation once: of two racing rotations, exactly one wins', async () => {
        const f = await family();
        const results = await Promise.all([advance(f, 0, 60), advance(f, 0, 60)]);
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.refreshTokens.get(f.id)).toMatchObject({ generation: 1, rotatedAt: at(60), tokenExpiresAt: at(3660), accessExpiresAt: at(660) });
        expect(await advance(f, 0, 61)).toBe(false);
        expect(await advance({ ...f, clientId: 'another-client' }, 1, 61)).toBe(false);
      });

      it('answers each of many rotations and lookups made at once for its own family', async () => {
        const families = await Promise.all(Array.from({ length: 12 }, () => family()));
        const [first, second] = families as [(typeof families)[0], (typeof families)[0]];
        const advanced = await Promise.all([
          ...families.map((f) => advance(f, 0, 60)),
          advance(first, 0, 61),
          advance({ ...second, clientId: 'another-client' }, 0, 60),
        ]);
        expect(advanced).toEqual([...families.map(() => true), false, false]);
        const found = await Promise.all([...families.map((f) => store.refreshTokens.get(f.id)), store.refreshTokens.get(randomUUID())]);
        expect(found.map((f) => f?.generation)).toEqual([...families.map(() => 1), undefined]);
        expect(found.map((f) => f?.id)).toEqual([...families.map((f) => f.id), undefined]);
      });

      it('creates families made at once, and a bad one fails alone', async () => {
        const client = sampleClient();
        await store.clients.upsert(client);
        const user = sampleUser();
        await store.users.upsert(user);
        const input = (clientId: string) => ({
          id: randomUUID(), clientId, userId: user.id, scopes: ['openid'], claims: null, allowedScopes: ['openid'], nonce: null,
          authTime: at(0), amr: ['pwd'], expiresAt: at(86_400), tokenSalt: randomBytes(32), tokenExpiresAt: at(3600), accessExpiresAt: at(600),
        });
        const [good, unknownClient, other] = [input(client.clientId), input(uniqueId('no-such-client')), input(client.clientId)];
        const results = await Promise.allSettled([good, unknownClient, other].map((f) => store.refreshTokens.createFamily(f)));
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect((await store.refreshTokens.get(good.id))?.tokenSalt.equals(good.tokenSalt)).toBe(true);
        expect(await store.refreshTokens.get(unknownClient.id)).toBeUndefined();
        expect((await store.refreshTokens.get(other.id))?.scopes).toEqual(['openid']);
      });

      it('keeps the earlier rotations within the grace window, newest first, at most four', async () => {
        const f = await family();
        for (let g = 0; g < 6; g++) expect(await advance(f, g, 100 + g)).toBe(true);
        expect((await store.refreshTokens.get(f.id))?.earlierRotations).toEqual([at(104), at(103), at(102), at(101)]);
        expect(await advance(f, 6, 200)).toBe(true);
        // 94 seconds later: every earlier rotation is past the window.
        expect(await store.refreshTokens.get(f.id)).toMatchObject({ generation: 7, rotatedAt: at(200), earlierRotations: [] });
      });

      it('never moves the idle expiry past the family\'s end, nor an expired or revoked family', async () => {
        const ending = await family({ expiresAt: at(1000) });
        expect(await advance(ending, 0, 500)).toBe(true);
        expect((await store.refreshTokens.get(ending.id))?.tokenExpiresAt).toEqual(at(1000));
        expect(await advance(ending, 1, 1000)).toBe(false);
        const idle = await family({ tokenExpiresAt: at(50) });
        expect(await advance(idle, 0, 50)).toBe(false);
        const revoked = await family();
        await store.refreshTokens.revokeFamily(revoked.id, 'test', at(10));
        expect(await advance(revoked, 0, 20)).toBe(false);
      });

      it('purges families past their end whose last access token has expired too, and nothing else', async () => {
        const ended = await family({ expiresAt: at(1000), tokenExpiresAt: at(500) });
        const accessLive = await family({ expiresAt: at(1000), tokenExpiresAt: at(500) });
        expect(await advance(accessLive, 0, 450)).toBe(true);
        const idle = await family({ expiresAt: at(86_400), tokenExpiresAt: at(500) });
        // At 1000 s: `ended` is past its end with its access token expired (600 s); `accessLive`
        // issued an access token until 1050 s; `idle` is only idle, not ended.
        let purged = 0;
        for (let count = -1; count !== 0; purged += count) count = await store.refreshTokens.purgeEnded(at(1000), 1);
        expect(purged).toBeGreaterThanOrEqual(1);
        expect(await store.refreshTokens.get(ended.id)).toBeUndefined();
        expect(await store.refreshTokens.get(accessLive.id)).toBeDefined();
        expect(await store.refreshTokens.get(idle.id)).toBeDefined();
        expect(await store.refreshTokens.purgeEnded(at(1050), 1000)).toBeGreaterThanOrEqual(1);
        expect(await store.refreshTokens.get(accessLive.id)).toBeUndefined();
      });

      it('revokes a family once, returning how long its access tokens live; and every family of a user at a client', async () => {
        const f = await family();
        expect(await store.refreshTokens.revokeFamily(f.id, 'test', at(10))).toEqual({ families: [{ id: f.id, accessExpiresAt: at(600) }], legacyAccess: [] });
        expect(await store.refreshTokens.revokeFamily(f.id, 'test', at(11))).toEqual({ families: [], legacyAccess: [] });
        expect((await store.refreshTokens.get(f.id))?.revokedAt).toEqual(at(10));
        const g = await family();
        expect((await store.refreshTokens.revokeForUserAndClient(g.userId, g.clientId, 'end session', at(20))).families.map((x) => x.id)).toEqual([g.id]);
        expect((await store.refreshTokens.revokeForUserAndClient(g.userId, g.clientId, 'end session', at(21))).families).toEqual([]);
      });

      it('lists a user\'s live families, oldest first, last used at their last rotation', async () => {
        const f = await family();
        const make = async (id: string, userId: string, tokenExpiresAt: Date) => store.refreshTokens.createFamily({
          id, clientId: f.clientId, userId, scopes: ['openid'], claims: null, allowedScopes: ['openid'], nonce: null, authTime: at(0), amr: ['pwd'],
          expiresAt: at(86_400), tokenSalt: randomBytes(32), tokenExpiresAt, accessExpiresAt: at(600),
        });
        const [idle, revoked, another] = [randomUUID(), randomUUID(), randomUUID()];
        await make(idle, f.userId, at(100));
        await make(revoked, f.userId, at(3600));
        await store.refreshTokens.revokeFamily(revoked, 'test', at(5));
        const other = sampleUser();
        await store.users.upsert(other);
        await make(another, other.id, at(3600));
        expect(await advance(f, 0, 50)).toBe(true);
        const listed = await store.refreshTokens.listForUser(f.userId, at(200));
        expect(listed).toEqual([{ id: f.id, clientId: f.clientId, createdAt: expect.any(Date), lastUsedAt: at(50), expiresAt: at(86_400) }]);
        expect((await store.refreshTokens.listForUser(f.userId, at(60))).map((x) => x.id).sort()).toEqual([f.id, idle].sort());
        expect((await store.refreshTokens.listForUser(other.id, at(60)))[0]).toMatchObject({ id: another, lastUsedAt: expect.any(Date) });
      });

      it('records revocations durably until they expire, then purges them', async () => {
        const [live, brief, past] = [uniqueId('jti'), uniqueId('jti'), uniqueId('jti')];
        await store.revocations.add([{ key: live, expiresAt: at(600) }, { key: brief, expiresAt: at(100) }, { key: past, expiresAt: at(5) }], at(10));
        // Recorded again with another expiry: the first record stands.
        await store.revocations.add([{ key: live, expiresAt: at(50) }], at(10));
        expect(await store.revocations.isRevoked(live, at(10))).toBe(true);
        expect(await store.revocations.isRevoked(past, at(10))).toBe(false);
        expect(await store.revocations.isRevoked(uniqueId('jti'), at(10))).toBe(false);
        expect(await store.revocations.isRevoked(live, at(600))).toBe(false);
        const keys = (await store.revocations.live(at(10), 1_000_000)).map((r) => r.key);
        expect(keys).toEqual(expect.arrayContaining([live, brief]));
        expect(keys).not.toContain(past);
        expect(await store.revocations.live(at(10), 1)).toHaveLength(1);
        let purged = 0;
        for (let count = -1; count !== 0; purged += count) count = await store.revocations.purgeExpired(at(100), 1);
        expect(purged).toBeGreaterThanOrEqual(1);
        expect((await store.revocations.live(at(10), 1_000_000)).map((r) => r.key)).toEqual(expect.arrayContaining([live]));
        expect((await store.revocations.live(at(10), 1_000_000)).map((r) => r.key)).not.toContain(brief);
      });

      it('revokes every family of a user and the access tokens issued without one, and returns what it recorded', async () => {
        const f = await family();
        const g = await family();
        await store.refreshTokens.createFamily({
          id: randomUUID(), clientId: g.clientId, userId: f.userId, scopes: ['openid'], claims: null, allowedScopes: ['openid'], nonce: null,
          authTime: at(0), amr: ['pwd'], expiresAt: at(86_400), tokenSalt: randomBytes(32), tokenExpiresAt: at(3600), accessExpiresAt: at(900),
        });
        const own = uniqueId('jti');
        await store.accessTokens.record(f.userId, f.clientId, { jti: own, expiresAt: at(700) }, at(0));
        const recorded = await store.revocations.revokeUser(f.userId, 'password changed', at(10));
        expect(recorded.map((r) => r.key).sort()).toEqual(expect.arrayContaining([`family:${f.id}`, own]));
        expect(recorded).toHaveLength(3);
        expect(recorded.find((r) => r.key === own)?.expiresAt).toEqual(at(700));
        expect((await store.refreshTokens.get(f.id))?.revokedAt).toEqual(at(10));
        expect((await store.refreshTokens.get(g.id))?.revokedAt).toBeNull();
        expect(await store.revocations.isRevoked(`family:${f.id}`, at(11))).toBe(true);
        expect(await store.accessTokens.takeLive(f.userId, f.clientId, at(11))).toEqual([]);
        expect(await store.revocations.revokeUser(f.userId, 'again', at(12))).toEqual([]);
      });

      it('revokes a user\'s tokens by itself when the user is locked, flagged or removed, whoever writes it; not when cleared', async () => {
        const changes = recordChanges(store);
        try {
          for (const change of [{ locked: true }, { mustChangePassword: true }, { mustEnrolMfa: true }]) {
            const f = await family();
            expect(await store.users.update(f.userId, change)).toBe(true);
            expect((await store.refreshTokens.get(f.id))?.revokedAt, JSON.stringify(change)).not.toBeNull();
            expect(await store.revocations.isRevoked(`family:${f.id}`, at(11))).toBe(true);
            await changes.waitFor((e) => e.kind === 'revoked' && e.key === `family:${f.id}`);
          }
          // Cleared (unlocked) or set again: a family made meanwhile stays.
          const f = await family();
          await store.users.update(f.userId, { mustChangePassword: true });
          const later = randomUUID();
          await store.refreshTokens.createFamily({
            id: later, clientId: f.clientId, userId: f.userId, scopes: ['openid'], claims: null, allowedScopes: ['openid'], nonce: null,
            authTime: at(0), amr: ['pwd'], expiresAt: at(86_400), tokenSalt: randomBytes(32), tokenExpiresAt: at(3600), accessExpiresAt: at(900),
          });
          await store.users.update(f.userId, { mustChangePassword: false, name: 'Renamed' });
          await store.users.update(f.userId, { roles: ['other'] });
          expect((await store.refreshTokens.get(later))?.revokedAt).toBeNull();

          const removed = await family();
          expect(await store.users.remove(removed.userId)).toBe(true);
          expect(await store.revocations.isRevoked(`family:${removed.id}`, at(11))).toBe(true);
          const { event } = await changes.waitFor((e) => e.kind === 'revoked' && e.key === `family:${removed.id}`);
          expect(event).toEqual({ kind: 'revoked', key: `family:${removed.id}`, expiresAt: at(600) });
        } finally {
          changes.stop();
        }
      });
    });

    describe('signing keys', () => {
      // Order matters here: these tests build on one another's keys.
      const clock: Clock = () => Date.now();
      const kek = deriveKey(randomBytes(32), 'signing-keys');
      let managers: KeyManager[];
      let first: string;
      let second: string;

      beforeAll(() => {
        // Five key managers over one store, as five instances starting at once would be.
        managers = Array.from({ length: 5 }, () => createKeyManager({ keys: store.signingKeys, kek, clock }));
      });

      it('ensureSigningKey called concurrently five times creates exactly one current key', async () => {
        expect(await store.signingKeys.list()).toEqual([]);
        // Key generation takes a varying while, which spreads the five calls out and would let
        // them pass even without a lock. So this repository holds every call at the door of
        // withLock until all five are there, and lingers after the check inside: only the lock
        // keeps the five check-then-insert steps from overlapping.
        let arrived = 0;
        let allArrived!: () => void;
        const door = new Promise<void>((resolve) => (allArrived = resolve));
        const crowded: SigningKeyRepository = {
          list: () => store.signingKeys.list(),
          async withLock(fn) {
            arrived += 1;
            if (arrived === managers.length) allArrived();
            await Promise.race([door, sleep(5000)]);
            return store.signingKeys.withLock((tx) =>
              fn({
                ...tx,
                async list() {
                  const listed = await tx.list();
                  await sleep(50);
                  return listed;
                },
              }),
            );
          },
        };
        const racing = managers.map(() => createKeyManager({ keys: crowded, kek, clock }));
        await Promise.all(racing.map((m) => m.ensureSigningKey()));
        expect(arrived).toBe(5);
        const keys = await store.signingKeys.list();
        expect(keys).toHaveLength(1);
        expect(keys[0]).toMatchObject({ state: 'current', alg: 'RS256', retiredAt: null, activatedAt: expect.any(Date) });
        first = keys[0]!.kid;
        // Once a current key exists, nothing more is created.
        await managers[0]!.ensureSigningKey();
        expect((await store.signingKeys.list()).map((k) => k.kid)).toEqual([first]);
      });

      it('signs with the current key, and the published key verifies it', async () => {
        const manager = managers[1]!;
        const signer = await manager.signer();
        expect(signer.kid).toBe(first);
        const jwt = await new SignJWT({ sub: 'ada' }).setProtectedHeader({ alg: 'RS256', kid: signer.kid }).sign(signer.key);
        const key = await manager.verificationKey(first);
        expect(key).toBeDefined();
        const { payload } = await jwtVerify(jwt, key!);
        expect(payload.sub).toBe('ada');
        expect(await manager.verificationKey('unknown-kid')).toBeUndefined();
      });

      it('publishes exactly kid, use, kty, alg, e and n', async () => {
        const { keys } = await managers[0]!.jwks();
        expect(keys).toHaveLength(1);
        for (const key of keys) {
          expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
          expect(key).toMatchObject({ kid: first, use: 'sig', kty: 'RSA', alg: 'RS256', e: 'AQAB' });
          expect(key.n).toMatch(/^[A-Za-z0-9_-]{342}$/);
        }
      });

      it('keeps the private key sealed: its "d" is not in the table, and another kek opens nothing', async () => {
        const [record] = await store.signingKeys.list();
        const privateJwk = JSON.parse(openSealed(kek, record!.privateJwkSealed, `signing-key:${record!.kid}`)) as { d?: string; n?: string };
        expect(privateJwk.n).toBe(record!.publicJwk.n);
        expect(privateJwk.d).toMatch(/^[A-Za-z0-9_-]{300,}$/);
        expect(record!.privateJwkSealed).not.toContain(privateJwk.d);
        expect(record!.privateJwkSealed).not.toContain(privateJwk.d!.slice(0, 32));
        expect(JSON.stringify(record!.publicJwk)).not.toContain(privateJwk.d!.slice(0, 32));
        expect(Object.keys(record!.publicJwk).sort()).toEqual(['e', 'kty', 'n']);

        const stranger = createKeyManager({ keys: store.signingKeys, kek: deriveKey(randomBytes(32), 'signing-keys'), clock });
        await expect(stranger.signer()).rejects.toThrow();
      });

      it('rotate makes a new current key and keeps the old one published as previous', async () => {
        const changes = recordChanges(store);
        try {
          const rotated = await managers[2]!.rotate();
          second = rotated.kid;
          expect(second).not.toBe(first);
          const states = Object.fromEntries((await store.signingKeys.list()).map((k) => [k.kid, k.state]));
          expect(states).toEqual({ [first]: 'previous', [second]: 'current' });
          expect((await managers[2]!.jwks()).keys.map((k) => k.kid).sort()).toEqual([first, second].sort());
          // Another instance that cached the old set reloads on the `keys` event.
          const { elapsed } = await changes.waitFor((e) => e.kind === 'keys');
          expect(elapsed).toBeLessThan(1000);
          managers[3]!.invalidate();
          expect((await managers[3]!.signer()).kid).toBe(second);
          expect(await managers[3]!.verificationKey(first)).toBeDefined();
        } finally {
          changes.stop();
        }
      });

      it('retire refuses the current key, retires the previous one, which leaves the key set', async () => {
        const manager = managers[4]!;
        expect(await manager.retire(second)).toBe('is_current');
        expect(await manager.retire('no-such-kid')).toBe('not_found');
        expect(await manager.retire(first)).toBe('retired');
        expect(await manager.retire(first)).toBe('already_retired');

        const keys = await store.signingKeys.list();
        expect(keys.find((k) => k.kid === first)).toMatchObject({ state: 'retired', retiredAt: expect.any(Date) });
        expect(keys.find((k) => k.kid === second)).toMatchObject({ state: 'current', retiredAt: null });
        expect((await manager.jwks()).keys.map((k) => k.kid)).toEqual([second]);
        expect(await manager.verificationKey(first)).toBeUndefined();
        expect((await manager.signer()).kid).toBe(second);
      });

      it('at most one key is current, whatever writes it', async () => {
        const [current] = (await store.signingKeys.list()).filter((k) => k.state === 'current');
        await expect(
          store.signingKeys.withLock((tx) => tx.insert({ ...current!, kid: uniqueId('kid'), state: 'current' })),
        ).rejects.toThrow(/signing_keys_one_current/);
        expect((await store.signingKeys.list()).filter((k) => k.state === 'current').map((k) => k.kid)).toEqual([second]);
      });

      it('reseal seals again under the current secret only what a previous one sealed, and keeps the key', async () => {
        const before = await store.signingKeys.list();
        const next = deriveKey(randomBytes(32), 'signing-keys');
        const rotating = createKeyManager({ keys: store.signingKeys, kek: { current: next, previous: [kek] }, clock });
        expect(await rotating.sealedUnderPrevious()).toBe(before.length);
        expect(await rotating.reseal()).toBe(before.length);
        expect(await rotating.sealedUnderPrevious()).toBe(0);
        expect(await rotating.reseal()).toBe(0);
        // The same keys, sealed anew: only the new secret opens them now.
        const after = await store.signingKeys.list();
        expect(after.map((k) => [k.kid, k.state])).toEqual(before.map((k) => [k.kid, k.state]));
        for (const record of after) expect(openSealed(next, record.privateJwkSealed, `signing-key:${record.kid}`)).toContain('"d"');
        const onlyNew = createKeyManager({ keys: store.signingKeys, kek: next, clock });
        const signer = await onlyNew.signer();
        expect(signer.kid).toBe(second);
        const signed = await new SignJWT({ sub: 'ada' }).setProtectedHeader({ alg: 'RS256', kid: second }).sign(signer.key);
        expect((await jwtVerify(signed, (await onlyNew.verificationKey(second))!)).payload.sub).toBe('ada');
        await expect(createKeyManager({ keys: store.signingKeys, kek, clock }).signer()).rejects.toThrow();
        // A key none of the secrets opens stops reseal before anything is written.
        await expect(createKeyManager({ keys: store.signingKeys, kek: deriveKey(randomBytes(32), 'signing-keys'), clock }).reseal()).rejects.toThrow(/opens under none/);
      });
    });

    describe('secret check', () => {
      const sealed = (n: number) => `v1.check-${n}`;

      it('is absent at first, written once by the first writer, and replaced only from what it was', async () => {
        expect(await store.secretCheck.get()).toBeUndefined();
        const racing = await Promise.all([1, 2, 3].map((n) => store.secretCheck.put(sealed(n))));
        expect(racing.filter(Boolean)).toHaveLength(1);
        const written = await store.secretCheck.get();
        expect([sealed(1), sealed(2), sealed(3)]).toContain(written);
        expect(await store.secretCheck.put(sealed(4))).toBe(false);
        expect(await store.secretCheck.put(sealed(5), 'not what it is')).toBe(false);
        expect(await store.secretCheck.get()).toBe(written);
        expect(await store.secretCheck.put(sealed(6), written)).toBe(true);
        expect(await store.secretCheck.get()).toBe(sealed(6));
      });
    });

    describe('transaction', () => {
      it('commits every write when the function returns, and returns its value', async () => {
        const client = sampleClient();
        const user = sampleUser();
        const result = await store.transaction(async (tx) => {
          await tx.clients.upsert(client);
          await tx.users.upsert(user);
          await tx.consents.grant(user.id, client.clientId, ['openid']);
          return 'done';
        });
        expect(result).toBe('done');
        expect(await store.clients.get(client.clientId)).toEqual(client);
        expect((await store.users.getById(user.id))?.username).toBe(user.username);
        expect(await store.consents.get(user.id, client.clientId)).toEqual(['openid']);
      });

      it('rolls back every write inside it when the function throws', async () => {
        const existing = sampleClient();
        await store.clients.upsert(existing);
        const existingUser = sampleUser();
        await store.users.upsert(existingUser);
        const client = sampleClient();
        const user = sampleUser();
        const scope = uniqueId('tx-scope');
        const clientsBefore = await store.clients.count();
        const usersBefore = await store.users.count();

        await expect(
          store.transaction(async (tx) => {
            expect(await tx.clients.upsert(client)).toBe('created');
            expect(await tx.users.upsert(user)).toBe('created');
            expect(await tx.apiScopes.add(scope)).toBe(true);
            await tx.consents.grant(user.id, client.clientId, ['openid']);
            expect(await tx.clients.update(existing.clientId, { displayName: 'changed in tx' })).toBe(true);
            expect(await tx.users.remove(existingUser.id)).toBe(true);
            expect(await tx.clients.remove(existing.clientId)).toBe(true);
            // Visible inside the transaction.
            expect(await tx.clients.get(client.clientId)).toEqual(client);
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');

        expect(await store.clients.get(client.clientId)).toBeUndefined();
        expect(await store.users.getById(user.id)).toBeUndefined();
        expect(await store.apiScopes.list()).not.toContain(scope);
        expect(await store.consents.get(user.id, client.clientId)).toEqual([]);
        expect(await store.clients.get(existing.clientId)).toEqual(existing);
        expect((await store.users.getById(existingUser.id))?.username).toBe(existingUser.username);
        expect(await store.clients.count()).toBe(clientsBefore);
        expect(await store.users.count()).toBe(usersBefore);
      });

      it('rolls back earlier writes when a later statement is refused by the database', async () => {
        const client = sampleClient();
        await expect(
          store.transaction(async (tx) => {
            await tx.clients.upsert(client);
            await tx.clients.update(client.clientId, { accessTokenLifetime: 0 });
          }),
        ).rejects.toThrow(violates('clients_access_token_lifetime_positive'));
        expect(await store.clients.get(client.clientId)).toBeUndefined();
        // The store is still usable afterwards.
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

    describe('onChange', () => {
      it('a listener on a store that had none hears the very next write', async () => {
        const openFresh = async (): Promise<{ store: DurableStore; close(): Promise<void> }> => {
          if (opened?.openAnother) {
            const another = await opened.openAnother();
            return { store: another, close: () => another.close() };
          }
          const o = await open();
          return { store: o.store, close: () => o.cleanup() };
        };
        // A store that only started to LISTEN when first subscribed lost this write about half
        // the time on PostgreSQL, so try a few fresh instances where they are cheap.
        const attempts = opened?.openAnother ? 5 : 1;
        for (let attempt = 0; attempt < attempts; attempt += 1) {
          const fresh = await openFresh();
          try {
            // In use already, as after migrate(): its next write does not wait for a new connection.
            await fresh.store.ping();
            const changes = recordChanges(fresh.store);
            const client = sampleClient();
            expect(await fresh.store.clients.upsert(client)).toBe('created');
            const { elapsed } = await changes.waitFor((e) => e.kind === 'client' && e.clientId === client.clientId);
            expect(elapsed).toBeLessThan(1000);
            changes.stop();
          } finally {
            await fresh.close();
          }
        }
      });

      it('another instance on the same database hears a write made through this one', async (ctx) => {
        if (!opened?.openAnother) return ctx.skip('this backend has no second instance');
        const other = await opened.openAnother();
        try {
          const changes = recordChanges(other);
          const client = sampleClient();
          await store.clients.upsert(client);
          await changes.waitFor((e) => e.kind === 'client' && e.clientId === client.clientId);
          expect(await store.clients.update(client.clientId, { requireConsent: false })).toBe(true);
          await waitUntil(() => changes.events.filter((e) => e.kind === 'client' && e.clientId === client.clientId).length === 2);
          expect((await other.clients.get(client.clientId))?.requireConsent).toBe(false);
          changes.stop();
        } finally {
          await other.close();
        }
      });

      it('an update through the repository announces the client within a second', async () => {
        const client = sampleClient();
        await store.clients.upsert(client);
        const changes = recordChanges(store);
        try {
          expect(await store.clients.update(client.clientId, { enabled: false })).toBe(true);
          const { event, elapsed } = await changes.waitFor((e) => e.kind === 'client' && e.clientId === client.clientId);
          expect(event).toEqual({ kind: 'client', clientId: client.clientId });
          expect(elapsed).toBeLessThan(1000);
        } finally {
          changes.stop();
        }
      });

      it('announces an update and a removal of a user, by id', async () => {
        const user = sampleUser();
        await store.users.upsert(user);
        const changes = recordChanges(store);
        try {
          expect(await store.users.update(user.id, { locked: true })).toBe(true);
          const { elapsed } = await changes.waitFor((e) => e.kind === 'user' && e.userId === user.id);
          expect(elapsed).toBeLessThan(1000);
          expect(await store.users.remove(user.id)).toBe(true);
          await waitUntil(() => changes.events.filter((e) => e.kind === 'user' && e.userId === user.id).length === 2);
        } finally {
          changes.stop();
        }
      });

      it('announces inserts and removals; an unchanged upsert announces nothing', async () => {
        const quiet = sampleClient();
        const changes = recordChanges(store);
        try {
          await store.clients.upsert(quiet);
          // Notifications arrive after the write returns: let the creation's own one in first.
          await changes.waitFor((e) => e.kind === 'client' && e.clientId === quiet.clientId);
          changes.events.length = 0;
          const added = sampleClient();
          expect(await store.clients.upsert(quiet)).toBe('unchanged');
          expect(await store.clients.upsert(added)).toBe('created');
          await changes.waitFor((e) => e.kind === 'client' && e.clientId === added.clientId);
          // Notifications arrive in commit order: had the no-op upsert notified, it would be here by now.
          expect(changes.events).not.toContainEqual({ kind: 'client', clientId: quiet.clientId });

          const aboutAdded = () => changes.events.filter((e) => e.kind === 'client' && e.clientId === added.clientId).length;
          expect(aboutAdded()).toBe(1);
          expect(await store.clients.remove(added.clientId)).toBe(true);
          await waitUntil(() => aboutAdded() === 2);
        } finally {
          changes.stop();
        }
      });

      it('announces nothing for a rolled-back transaction', async () => {
        const rolledBack = sampleClient();
        const committed = sampleClient();
        const changes = recordChanges(store);
        try {
          await expect(store.transaction(async (tx) => {
            await tx.clients.upsert(rolledBack);
            throw new Error('no');
          })).rejects.toThrow('no');
          await store.clients.upsert(committed);
          await changes.waitFor((e) => e.kind === 'client' && e.clientId === committed.clientId);
          expect(changes.events).not.toContainEqual({ kind: 'client', clientId: rolledBack.clientId });
        } finally {
          changes.stop();
        }
      });

      it('stops calling a listener once it unsubscribes', async () => {
        const client = sampleClient();
        await store.clients.upsert(client);
        const gone = recordChanges(store);
        const kept = recordChanges(store);
        try {
          gone.stop();
          await store.clients.update(client.clientId, { displayName: 'after unsubscribe' });
          await kept.waitFor((e) => e.kind === 'client' && e.clientId === client.clientId);
          expect(gone.events).toEqual([]);
        } finally {
          kept.stop();
        }
      });
    });
  });
}
