/**
 * Changes at a row version, decided by the write itself: two changes that both read the same
 * version (held at a gate until both have read it, as two racing requests may) end with one made
 * and the other refused as stale, for a client's patch and for a user's, on the embedded database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateClient } from '../../../src/admin/client-update.ts';
import { createClient } from '../../../src/admin/clients.ts';
import { AdminError } from '../../../src/admin/errors.ts';
import type { ChangeActor } from '../../../src/admin/recorded-change.ts';
import { updateUser } from '../../../src/admin/user-update.ts';
import { createUser } from '../../../src/admin/users.ts';
import type { DurableStore } from '../../../src/store/types.ts';
import { openMigratedEmbedded } from '../../helpers/embedded-database.ts';

/** The store, with its versioned reads held until `readers` of them have read. */
function gated(durable: DurableStore, readers: number): DurableStore {
  let arrived = 0;
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const hold = async <T>(read: Promise<T>): Promise<T> => {
    const value = await read;
    arrived += 1;
    if (arrived === readers) open();
    await gate;
    return value;
  };
  return Object.assign(Object.create(durable) as DurableStore, {
    clients: { ...durable.clients, getVersioned: (id: string) => hold(durable.clients.getVersioned(id)) },
    users: { ...durable.users, getVersioned: (id: string) => hold(durable.users.getVersioned(id)) },
    transaction: durable.transaction.bind(durable),
  });
}

const ACTOR: ChangeActor = { by: { actor: 'cli' }, logged: () => {} };

const outcome = (settled: PromiseSettledResult<unknown>) =>
  settled.status === 'fulfilled' ? 'made' : settled.reason instanceof AdminError ? settled.reason.code : String(settled.reason);

describe('changes at a row version', () => {
  let durable: DurableStore;
  beforeAll(async () => {
    durable = await openMigratedEmbedded();
  });
  afterAll(async () => {
    await durable?.close();
  });

  it('of two client patches that read one version, one is made and the other is stale', async () => {
    await createClient({ durable, clock: Date.now }, {
      clientId: 'raced', displayName: 'before', enabled: true, public: false, secretExpiresAt: null, grantTypes: ['client_credentials'],
      scopes: [], redirectUris: [], postLogoutRedirectUris: [], corsOrigins: [], accessTokenLifetime: 3600, requireConsent: false,
    }, ACTOR);
    const version = (await durable.clients.getVersioned('raced'))?.version;
    const store = gated(durable, 2);
    const results = await Promise.allSettled(['A', 'B'].map((name) => updateClient({ durable: store, clock: Date.now }, 'raced', { display_name: name }, ACTOR, version)));
    expect(results.map(outcome).sort()).toEqual(['made', 'stale']);
    const made = results.findIndex((r) => r.status === 'fulfilled');
    expect((await durable.clients.get('raced'))?.displayName).toBe(['A', 'B'][made]);
  });

  it('of two user patches that read one version, one is made and the other is stale', async () => {
    const { user: { record: user } } = await createUser({ durable, clock: Date.now }, {
      username: 'raced', password: 'a long and good password', givenName: null, familyName: null, email: null,
      emailVerified: false, phoneNumber: null, phoneNumberVerified: false, roles: [],
    }, ACTOR);
    const version = (await durable.users.getVersioned(user.id))?.version;
    const store = gated(durable, 2);
    const deps = { durable: store, secret: Buffer.alloc(32, 7), clock: () => Date.now() };
    const results = await Promise.allSettled(['A', 'B'].map((name) => updateUser(deps, user, { given_name: name }, ACTOR, { ifVersion: version })));
    expect(results.map(outcome).sort()).toEqual(['made', 'stale']);
  });
});
