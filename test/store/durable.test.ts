/**
 * The durable store contract on every backend: PostgreSQL (a fresh database per suite) and
 * embedded PGlite in memory. Then what only PostgreSQL can show: the clients cache following
 * edits made with SQL from another connection, and migrations started by several instances.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { createClientsCache, type ClientsCache } from '../../src/store/clients-cache.ts';
import { createCachedUsers, type CachedUsers } from '../../src/store/users-cache.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import type { ClientRecord, UserRecord } from '../../src/store/records.ts';
import type { DurableStore } from '../../src/store/types.ts';
import { createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { durableContract, sampleClient, sampleUser, uniqueId, type OpenedDurableStore } from './durable-contract.ts';

async function openPostgres(): Promise<OpenedDurableStore> {
  const database = await createTestDatabase();
  try {
    const store = await openDurableStore({ databaseUrl: database.url });
    expect(store.kind).toBe('postgres');
    const migrated = await store.migrate();
    return {
      store,
      migrated,
      async cleanup() {
        await store.close().catch(() => {});
        await database.drop();
      },
      openAnother: () => openDurableStore({ databaseUrl: database.url }),
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

async function openEmbedded(): Promise<OpenedDurableStore> {
  const store = await openDurableStore({});
  expect(store.kind).toBe('embedded');
  const migrated = await store.migrate();
  return {
    store,
    migrated,
    async cleanup() {
      await store.close().catch(() => {});
    },
  };
}

/**
 * A fresh migrated database with a cache over it for the suite it is called in; `opened` hands
 * them to the suite once made. Closed and dropped after the suite.
 */
function useCacheOverPostgres<C extends { close(): void }>(
  makeCache: (store: DurableStore) => C,
  opened: (made: { database: TestDatabase; store: DurableStore; cache: C }) => void,
): void {
  let made: { database: TestDatabase; store: DurableStore; cache: C } | undefined;
  beforeAll(async () => {
    const database = await createTestDatabase();
    const store = await openDurableStore({ databaseUrl: database.url });
    await store.migrate();
    made = { database, store, cache: makeCache(store) };
    opened(made);
  });
  afterAll(async () => {
    made?.cache.close();
    await made?.store.close().catch(() => {});
    await made?.database.drop();
  });
}

/** Reads every 20 ms until `done` holds; returns the milliseconds it took (fails after 3 s). */
async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (done(await read())) return performance.now() - started;
    if (performance.now() - started > 3000) throw new Error(`the cache did not see the change to ${what} within 3 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(postgresAvailable)('PostgreSQL', () => {
  durableContract('PostgreSQL', openPostgres);

  describe('clients cache over PostgreSQL', () => {
    let database: TestDatabase;
    let store: DurableStore;
    let cache: ClientsCache;
    useCacheOverPostgres(createClientsCache, (opened) => ({ database, store, cache } = opened));
    // The API scope of sampleClient(): a client is served with the API scopes that exist.
    beforeAll(async () => {
      await store.apiScopes.add('api:read');
    });

    const pollCache = (clientId: string, done: (client: ClientRecord | undefined) => boolean) => pollUntil(() => cache.get(clientId), done, clientId);

    it('serves a client without the API scopes removed from api_scopes, and with them once added back', async () => {
      const client = sampleClient({ scopes: ['openid', 'api:read', 'api:gone'] });
      await store.clients.upsert(client);
      expect((await cache.get(client.clientId))?.scopes).toEqual(['openid', 'api:read']);
      await runSql(database.url, `INSERT INTO api_scopes (name) VALUES ('api:gone')`);
      expect(await pollCache(client.clientId, (c) => c?.scopes.includes('api:gone') ?? false)).toBeLessThan(1000);
      await runSql(database.url, `DELETE FROM api_scopes WHERE name = 'api:gone'`);
      expect(await pollCache(client.clientId, (c) => !(c?.scopes.includes('api:gone') ?? true))).toBeLessThan(1000);
      expect((await store.clients.get(client.clientId))?.scopes).toEqual(['openid', 'api:read', 'api:gone']);
    });

    it('sees an UPDATE made with SQL on another connection within a second', async () => {
      const client = sampleClient();
      await store.clients.upsert(client);
      expect((await cache.get(client.clientId))?.enabled).toBe(true);
      // Cached: a second read is served from memory and still says enabled.
      expect((await cache.get(client.clientId))?.enabled).toBe(true);

      await runSql(database.url, 'UPDATE clients SET enabled=false WHERE client_id=$1', [client.clientId]);
      const elapsed = await pollCache(client.clientId, (c) => c?.enabled === false);
      expect(elapsed).toBeLessThan(1000);
      expect(await cache.get(client.clientId)).toEqual({ ...client, enabled: false });
    });

    it('sees an INSERT of a client id it had looked up and not found', async () => {
      const clientId = uniqueId('late');
      expect(await cache.get(clientId)).toBeUndefined();
      expect(await cache.get(clientId)).toBeUndefined();

      await runSql(
        database.url,
        `INSERT INTO clients (client_id, display_name, redirect_uris) VALUES ($1, 'Inserted with SQL', '{https://late.example/cb}')`,
        [clientId],
      );
      const elapsed = await pollCache(clientId, (c) => c !== undefined);
      expect(elapsed).toBeLessThan(1000);
      expect(await cache.get(clientId)).toMatchObject({
        clientId,
        displayName: 'Inserted with SQL',
        enabled: true,
        grantTypes: ['authorization_code'],
        redirectUris: ['https://late.example/cb'],
        accessTokenLifetime: 3600,
      });
    });

    it('sees a DELETE made with SQL', async () => {
      const client = sampleClient();
      await store.clients.upsert(client);
      expect(await cache.get(client.clientId)).toEqual(client);
      await runSql(database.url, 'DELETE FROM clients WHERE client_id=$1', [client.clientId]);
      const elapsed = await pollCache(client.clientId, (c) => c === undefined);
      expect(elapsed).toBeLessThan(1000);
    });

    it('refuses an SQL edit that breaks a rule of the table', async () => {
      const client = sampleClient();
      await store.clients.upsert(client);
      await expect(
        runSql(database.url, `UPDATE clients SET redirect_uris='{https://app.example/cb#x}' WHERE client_id=$1`, [client.clientId]),
      ).rejects.toThrow(/clients_redirect_uris_format/);
      await expect(
        runSql(database.url, `UPDATE clients SET redirect_uris='{javascript:alert(1)}' WHERE client_id=$1`, [client.clientId]),
      ).rejects.toThrow(/clients_redirect_uris_format/);
      await expect(
        runSql(database.url, `INSERT INTO clients (client_id, redirect_uris) VALUES ('sql-js', '{"data:text/html,<script>alert(1)</script>"}')`),
      ).rejects.toThrow(/clients_redirect_uris_format/);
      await expect(
        runSql(database.url, `UPDATE clients SET grant_types='{password}' WHERE client_id=$1`, [client.clientId]),
      ).rejects.toThrow(/clients_grant_types_known/);
      expect(await store.clients.get(client.clientId)).toEqual(client);
    });
  });

  describe('users cache over PostgreSQL', () => {
    let database: TestDatabase;
    let store: DurableStore;
    let users: CachedUsers;
    useCacheOverPostgres(createCachedUsers, (opened) => ({ database, store, cache: users } = opened));

    const pollUser = (id: string, done: (user: UserRecord | undefined) => boolean) => pollUntil(() => users.getById(id), done, id);

    it('serves a user from memory, and sees an UPDATE and a DELETE made with SQL within a second', async () => {
      const user = sampleUser();
      await store.users.upsert(user);
      expect((await users.getById(user.id))?.locked).toBe(false);
      // Changed behind the repository's back without a notification: the cache still answers the old row.
      await runSql(database.url, 'ALTER TABLE users DISABLE TRIGGER users_notify_change');
      await runSql(database.url, 'UPDATE users SET name=$2 WHERE id=$1', [user.id, 'Unseen']);
      await runSql(database.url, 'ALTER TABLE users ENABLE TRIGGER users_notify_change');
      expect((await users.getById(user.id))?.name).toBe(user.name);

      await runSql(database.url, 'UPDATE users SET locked=true WHERE id=$1', [user.id]);
      expect(await pollUser(user.id, (u) => u?.locked === true)).toBeLessThan(1000);
      expect((await users.getById(user.id))?.name).toBe('Unseen');
      await runSql(database.url, 'DELETE FROM users WHERE id=$1', [user.id]);
      expect(await pollUser(user.id, (u) => u === undefined)).toBeLessThan(1000);
    });

    it('sees a second factor added, then removed, with SQL within a second', async () => {
      const user = sampleUser();
      await store.users.upsert(user);
      expect((await users.getById(user.id))?.factors).toEqual([]);
      await runSql(database.url, "INSERT INTO user_factors (user_id, kind, name, secret_sealed) VALUES ($1, 'totp', 'App', 'v1.x')", [user.id]);
      expect(await pollUser(user.id, (u) => u?.factors.length === 1)).toBeLessThan(1000);
      await runSql(database.url, 'DELETE FROM user_factors WHERE user_id = $1', [user.id]);
      expect(await pollUser(user.id, (u) => u?.factors.length === 0)).toBeLessThan(1000);
    });

    it("sees its own writes at once, without waiting for the notification", async () => {
      const user = sampleUser();
      await users.upsert(user);
      expect((await users.getById(user.id))?.mustChangePassword).toBe(false);
      expect(await users.update(user.id, { mustChangePassword: true })).toBe(true);
      expect((await users.getById(user.id))?.mustChangePassword).toBe(true);
      expect(await users.remove(user.id)).toBe(true);
      expect(await users.getById(user.id)).toBeUndefined();
    });

    it('does not keep a miss: a user inserted later is found', async () => {
      const user = sampleUser();
      expect(await users.getById(user.id)).toBeUndefined();
      await store.users.upsert(user);
      expect((await users.getById(user.id))?.username).toBe(user.username);
    });
  });

  describe('prepared statements over PostgreSQL', () => {
    it('keep working on every pooled connection after a later migration adds columns', async () => {
      const database = await createTestDatabase();
      const store = await openDurableStore({ databaseUrl: database.url });
      try {
        await store.migrate();
        const user = sampleUser();
        const client = sampleClient();
        await store.users.upsert(user);
        await store.clients.upsert(client);
        // Prepared on many connections at once, then the tables change under them.
        const before = await Promise.all(Array.from({ length: 12 }, () => store.users.getById(user.id)));
        expect(before.every((u) => u?.username === user.username)).toBe(true);
        await runSql(database.url, 'ALTER TABLE users ADD COLUMN nickname text');
        await runSql(database.url, 'ALTER TABLE refresh_token_families ADD COLUMN device text');
        const after = await Promise.all(Array.from({ length: 12 }, () => store.users.getById(user.id)));
        expect(after.every((u) => u?.username === user.username)).toBe(true);
        expect((await store.users.getByUsername('local', user.username))?.id).toBe(user.id);
        expect(await store.refreshTokens.get('00000000-0000-4000-8000-000000000000')).toBeUndefined();
      } finally {
        await store.close();
        await database.drop();
      }
    });
  });

  describe('migrations over PostgreSQL', () => {
    it('several instances migrating one fresh database at once apply each migration once', async () => {
      const database = await createTestDatabase();
      const stores = await Promise.all([1, 2, 3].map(() => openDurableStore({ databaseUrl: database.url })));
      try {
        const results = await Promise.all(stores.map((s) => s.migrate()));
        expect(results.flat().sort()).toEqual(Object.keys(migrations).sort());
        const rows = await runSql<{ name: string }>(database.url, 'SELECT name FROM kysely_migration ORDER BY name');
        expect(rows.map((r) => r.name)).toEqual(Object.keys(migrations));
      } finally {
        await Promise.all(stores.map((s) => s.close().catch(() => {})));
        await database.drop();
      }
    });
  });
});

describe('embedded PGlite (in memory)', () => {
  durableContract('PGlite', openEmbedded);
});
