/**
 * The administrative layer's contract, as a later HTTP API will rely on it: typed results, and
 * one AdminError whose code and field paths say what was refused (on the embedded database).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, getClient, removeClient, type NewClient } from '../../../src/admin/clients.ts';
import { AdminError } from '../../../src/admin/errors.ts';
import type { ChangeActor, ChangeDeps } from '../../../src/admin/recorded-change.ts';
import { rotateClientSecret } from '../../../src/admin/secrets.ts';
import { createUser, findUser, type NewLocalUser } from '../../../src/admin/users.ts';
import type { DurableStore } from '../../../src/store/types.ts';
import { verifyClientSecret } from '../../../src/tokens/opaque.ts';
import { openMigratedEmbedded } from '../../helpers/embedded-database.ts';

const CLIENT: NewClient = {
  clientId: 'svc', displayName: '', enabled: true, public: false, secretExpiresAt: new Date('2030-01-01T00:00:00Z'),
  grantTypes: ['client_credentials'], scopes: [], redirectUris: [], postLogoutRedirectUris: [], corsOrigins: [],
  accessTokenLifetime: 3600, requireConsent: false,
};
const USER: NewLocalUser = {
  username: ' Zoe ', password: 'violet orchestra lantern 2031', givenName: null, familyName: null,
  email: null, emailVerified: false, phoneNumber: null, phoneNumberVerified: false, roles: [],
};

async function refusal(promise: Promise<unknown>): Promise<AdminError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AdminError);
  return error as AdminError;
}

const ACTOR: ChangeActor = { by: { actor: 'cli' }, logged: () => {} };

describe('the administrative layer', () => {
  let durable: DurableStore;
  let deps: ChangeDeps;
  beforeAll(async () => {
    durable = await openMigratedEmbedded();
    deps = { durable, clock: () => Date.now() };
  });
  afterAll(async () => {
    await durable?.close();
  });

  it('creates a client with its secret once, refuses a second one (conflict) and bad fields by path (invalid)', async () => {
    const created = await createClient(deps, CLIENT, ACTOR);
    expect(created.kind).toBe('created');
    expect(verifyClientSecret(created.secret ?? '', created.client.record.secretHash ?? '')).toBe(true);
    expect(await refusal(createClient(deps, CLIENT, ACTOR))).toMatchObject({ code: 'conflict', message: 'client svc already exists' });
    const bad = await refusal(createClient(deps, { ...CLIENT, clientId: 'web', redirectUris: ['https://ok.example/cb', 'javascript:alert(1)'], public: true, grantTypes: ['authorization_code'] }, ACTOR));
    expect(bad.code).toBe('invalid');
    expect(bad.problems.map((p) => p.path)).toStrictEqual([['redirect_uris', 1], ['secret_expires_at']]);
  });

  it('rotates a secret and clears its expiry; a missing client is not_found', async () => {
    const rotated = await rotateClientSecret(deps, 'svc', ACTOR);
    const stored = await getClient(durable, 'svc');
    expect(verifyClientSecret(rotated.secret, stored.secretHash ?? '')).toBe(true);
    expect(stored.secretExpiresAt).toBeNull();
    expect(await refusal(removeClient(deps, 'nope', ACTOR))).toMatchObject({ code: 'not_found', message: 'no client with id nope' });
  });

  it('stores a user canonical, finds it by any spelling, refuses another spelling (conflict) and a control character (invalid, by path)', async () => {
    const { user: { record: user } } = await createUser(deps, USER, ACTOR);
    expect(user.username).toBe('zoe');
    expect((await findUser(durable, 'ZOE', ['local'])).id).toBe(user.id);
    expect(await refusal(createUser(deps, { ...USER, username: 'ZOE' }, ACTOR))).toMatchObject({ code: 'conflict', message: 'user ZOE already exists' });
    const hostile = await refusal(createUser(deps, { ...USER, username: 'yan', givenName: 'Y\u001b[2J' }, ACTOR));
    expect(hostile).toMatchObject({ code: 'invalid', problems: [{ path: ['given_name'] }] });
  });
});
