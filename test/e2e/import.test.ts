/**
 * Leaving another provider, from outside: exports built in Keycloak's and
 * Auth0's documented formats (and the seed file's), their hashes computed here, imported with
 * `idp import` on PostgreSQL and on the embedded database, then each imported user signs in
 * through the pages with their old password (one with their old authenticator app) at the
 * imported client; the stored hash is the service's argon2id after that first sign-in.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedDatabasePath } from '../../src/data-dir.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import { copyMigratedDatabase } from '../helpers/embedded-database.ts';
import { auth0User, keycloakClient, keycloakOtpCredential, keycloakPasswordCredential, keycloakRealm, keycloakUser } from '../helpers/exports.ts';
import { pkce } from '../helpers/oauth.ts';
import { runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { Browser, codeFrom, codeRequest, decodeJwt, formTo, isConsentPage, isSignInPage, readForm, redeem, submitConsent, submitSignIn, type Page } from '../helpers/relying-party.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';
import { awayFromStepEnd, nowSeconds, totp } from '../helpers/totp.ts';
import { IDP_SECRET } from './code-flow-support.ts';

const SHOP = { clientId: 'shop', secret: 'shop-secret-from-keycloak-0123456789abcdef' };
const SHOP_REDIRECT = 'https://shop.example/cb';
/** The OTP secret as Keycloak keeps it: text, whose UTF-8 bytes the app was given in base32. */
const OTP_TEXT = 'kq3VbL9xTz2mWp8rYs4n';
const OTP_BASE32 = 'NNYTGVTCJQ4XQVD2GJWVO4BYOJMXGNDO';

interface Person { username: string; password: string; sub?: string }
const person = (username: string, sub?: string): Person => ({ username, password: `${username} kept an old password 7`, ...(sub ? { sub } : {}) });

const KC = {
  sha256: person('kc-sha256', randomUUID()), sha512: person('kc-sha512', randomUUID()), sha1: person('kc-sha1', randomUUID()),
  argon2: person('kc-argon2', randomUUID()), otp: person('kc-otp', randomUUID()), costly: person('kc-costly', randomUUID()),
};
const A0 = { ann: person('ann@auth0.example'), ben: person('ben@auth0.example') };
const IDP = { pbkdf2: person('idp-pbkdf2'), scrypt: person('idp-scrypt') };

/** The credential as if hashed with 10,000,001 iterations (one over the bound; not computed: it would take seconds). */
function costlier(credential: object): object {
  const data = JSON.parse((credential as { credentialData: string }).credentialData) as object;
  return { ...credential, credentialData: JSON.stringify({ ...data, hashIterations: 10_000_001 }) };
}

async function keycloakExport(): Promise<object> {
  const password = (p: Person, algorithm: 'pbkdf2' | 'pbkdf2-sha256' | 'pbkdf2-sha512' | 'argon2', iterations: number) => keycloakPasswordCredential(p.password, { algorithm, iterations });
  const user = async (p: Person, credentials: object[], extra: object = {}) => keycloakUser({ id: p.sub, username: p.username, email: `${p.username}@example.com`, firstName: 'Kay', credentials, ...extra });
  return keycloakRealm([
    await user(KC.sha256, [await password(KC.sha256, 'pbkdf2-sha256', 27500)], { realmRoles: ['default-roles-shop', 'buyer'] }),
    await user(KC.sha512, [await password(KC.sha512, 'pbkdf2-sha512', 30000)]),
    await user(KC.sha1, [await password(KC.sha1, 'pbkdf2', 20000)]),
    await user(KC.argon2, [await password(KC.argon2, 'argon2', 3)]),
    await user(KC.otp, [await password(KC.otp, 'pbkdf2-sha256', 27500), keycloakOtpCredential(OTP_TEXT)]),
    // Beyond the bounds: refused by pointer, and nothing else with it.
    await user(KC.costly, [costlier(await password(KC.costly, 'pbkdf2-sha256', 1000))]),
    // The same id as another user's: refused (a sub names one user), and only this one.
    keycloakUser({ id: KC.sha256.sub, username: 'kc-same-id', credentials: [await password(KC.sha1, 'pbkdf2-sha256', 1000)] }),
    keycloakUser({ username: 'kc-locked', enabled: false, requiredActions: ['UPDATE_PASSWORD', 'CONFIGURE_TOTP'], credentials: [await password(KC.sha1, 'pbkdf2-sha256', 1000)] }),
  ], [keycloakClient(SHOP.clientId, SHOP_REDIRECT, SHOP.secret)]);
}

function auth0Export(): string {
  return [
    JSON.stringify(auth0User({ email: A0.ann.username, password: A0.ann.password, given_name: 'Ann', cost: 4 })),
    '{"user_id": "auth0|broken", "email": ',
    JSON.stringify({ ...auth0User({ email: 'cat@auth0.example', password: 'irrelevant', cost: 4 }), passwordHash: '$2b$04$short' }),
    JSON.stringify(auth0User({ email: A0.ben.username, password: A0.ben.password, username: 'ben0', cost: 4 })),
  ].join('\n');
}

async function idpExport(): Promise<object> {
  const { pbkdf2Sync, randomBytes, scryptSync } = await import('node:crypto');
  const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  const salt = randomBytes(16);
  const pbkdf2 = `$pbkdf2-sha512$i=25000$${b64(salt)}$${b64(pbkdf2Sync(IDP.pbkdf2.password, salt, 25000, 64, 'sha512'))}`;
  const scrypt = `$scrypt$ln=14,r=8,p=1$${b64(salt)}$${b64(scryptSync(IDP.scrypt.password, salt, 32, { N: 2 ** 14, r: 8, p: 1 }))}`;
  return { users: [{ username: IDP.pbkdf2.username, password_hash: pbkdf2, given_name: 'Ida' }, { username: IDP.scrypt.username, password_hash: scrypt }, { username: 'idp-unknown', password_hash: '$md5$x$y' }] };
}

/** Signs in through the pages (the authenticator code too, when asked), allows, and returns the id token's claims. */
async function signIn(base: string, who: Person): Promise<Record<string, unknown>> {
  const browser = new Browser();
  const { verifier, challenge } = pkce();
  let page: Page = await browser.follow(await browser.get(codeRequest(base, SHOP.clientId, SHOP_REDIRECT, challenge)), base);
  expect(isSignInPage(page), page.body.slice(0, 300)).toBe(true);
  page = await browser.follow(await submitSignIn(browser, page, who), base);
  if (formTo(page, 'otp')) {
    await awayFromStepEnd();
    const form = readForm(page.body, page.url);
    page = await browser.follow(await browser.post(form.action, { ...form.fields, otp: await totp(OTP_BASE32, nowSeconds()) }), base);
  }
  if (isConsentPage(page)) page = await browser.follow(await submitConsent(browser, page, 'allow'), base);
  const redeemed = await redeem(base, codeFrom(page, SHOP_REDIRECT, `${base}/`), SHOP_REDIRECT, verifier, SHOP);
  expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
  return decodeJwt(redeemed.body.id_token).payload;
}

interface Target { name: string; env: () => Record<string, string>; open: () => ReturnType<typeof openDurableStore>; cleanup(): Promise<void> }

function postgresTarget(): Target {
  let db: TestDatabase | undefined;
  return {
    name: 'PostgreSQL',
    env: () => ({ DATABASE_URL: db?.url ?? '', IDP_SECRET }),
    open: () => openDurableStore({ databaseUrl: db?.url ?? '' }),
    async cleanup() { await db?.drop(); },
    ...{ async setup() { db = await createTestDatabase(); } },
  } as Target & { setup(): Promise<void> };
}

function embeddedTarget(): Target & { setup(): Promise<void> } {
  const dir = tempDir('idp-import-');
  return {
    name: 'the embedded database',
    env: () => ({ IDP_DATA_DIR: dir.path }),
    open: () => openDurableStore({ dataDir: embeddedDatabasePath(dir.path) }),
    async cleanup() { dir.remove(); },
    // A migrated database to start from (the first command would otherwise spend its time on initdb).
    setup: () => copyMigratedDatabase(dir.path),
  };
}

const TARGETS = [...(postgresAvailable ? [postgresTarget] : []), embeddedTarget];

describe.each(TARGETS.map((make) => [make().name, make]))('idp import on %s', (_name, make) => {
  const target = make() as Target & { setup(): Promise<void> };
  const files = tempDir('idp-import-files-');
  const file = (name: string) => join(files.path, name);
  let server: RunningServer | undefined;

  beforeAll(async () => {
    await target.setup();
    writeFileSync(file('realm-export.json'), JSON.stringify(await keycloakExport(), null, 2));
    writeFileSync(file('users.ndjson'), auth0Export());
    writeFileSync(file('seed.json'), JSON.stringify(await idpExport()));
  });
  afterAll(async () => {
    await server?.stop();
    await target.cleanup();
    files.remove();
  });

  const importFile = (name: string, format: string, ...extra: string[]) => runIdp(['import', file(name), '--format', format, ...extra], target.env());

  it('imports a Keycloak realm export record by record: a dry run writes nothing, a refused user refuses nothing else, a second import changes nothing', async () => {
    const dry = await importFile('realm-export.json', 'keycloak', '--dry-run');
    expect(dry.code, dry.stderr).toBe(1);
    expect(dry.stdout).toContain('dry run, nothing written: users: 6 created, 0 updated, 0 skipped, 2 refused; clients: 1 created, 0 updated, 2 skipped, 0 refused');
    const done = await importFile('realm-export.json', 'keycloak');
    expect(done.code, done.stderr).toBe(1);
    expect(done.stdout).toContain('users: 6 created, 0 updated, 0 skipped, 2 refused; clients: 1 created, 0 updated, 2 skipped, 0 refused');
    expect(done.stdout).toContain(`user ${KC.costly.username}: refused: /users/5/credentials/0: has 10000001 PBKDF2 iterations: from 1 to 10000000 are accepted`);
    expect(done.stdout).toContain('user kc-same-id: refused: /users/6/id: repeats a record earlier in the file');
    expect(done.stdout).toContain('client account: skipped (Keycloak\'s own client)');
    expect(done.stdout + done.stderr).not.toMatch(/\$pbkdf2|\$argon2|secretData|hashIterations/);
    const again = await importFile('realm-export.json', 'keycloak', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ dry_run: false, users: { created: 0, updated: 0, skipped: 6, refused: 2 }, clients: { created: 0, updated: 0, skipped: 3 } });
    const durable = await target.open();
    try {
      const locked = await durable.users.getByUsername('local', 'kc-locked');
      expect(locked).toMatchObject({ locked: true, mustChangePassword: true, mustEnrolMfa: true });
      expect(await durable.users.getByUsername('local', KC.sha256.username)).toMatchObject({ subject: KC.sha256.sub, givenName: 'Kay', email: 'kc-sha256@example.com', emailVerified: true, roles: ['default-roles-shop', 'buyer'] });
      expect(await durable.clients.get(SHOP.clientId)).toMatchObject({
        redirectUris: [SHOP_REDIRECT], postLogoutRedirectUris: ['https://shop.example/', 'https://shop.example/bye'], corsOrigins: ['https://shop.example'],
        grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'], scopes: ['openid', 'profile', 'roles', 'email', 'phone', 'offline_access'],
      });
    } finally {
      await durable.close();
    }
  });

  it('imports Auth0\'s user export (one object a line) and the seed file\'s format with password_hash, naming each refused line or field', async () => {
    const auth0 = await importFile('users.ndjson', 'auth0');
    expect(auth0.code, auth0.stderr).toBe(1);
    expect(auth0.stdout).toContain('user ?: refused: line 2: is not JSON');
    expect(auth0.stdout).toContain('user cat@auth0.example: refused: line 3 /passwordHash: is malformed');
    expect(auth0.stdout).toContain('users: 2 created, 0 updated, 0 skipped, 2 refused');
    const idp = await importFile('seed.json', 'idp');
    expect(idp.stdout).toContain('user idp-unknown: refused: /users/2/password_hash: is not a known hash');
    expect(idp.stdout).toContain('users: 2 created, 0 updated, 0 skipped, 1 refused');
  });

  it('signs each imported user in with their old password (and their old authenticator app); the first sign-in makes the hash argon2id', async () => {
    server = await startServer(target.env());
    const people = [KC.sha256, KC.sha512, KC.sha1, KC.argon2, KC.otp, A0.ann, { ...A0.ben, username: 'ben0' }, IDP.pbkdf2, IDP.scrypt];
    const claims = [];
    for (const who of people) claims.push(await signIn(server.url, who));
    expect(claims[0]?.sub).toBe(KC.sha256.sub);
    expect(claims[4]?.sub).toBe(KC.otp.sub);
    expect(String(claims[5]?.sub)).toMatch(/^auth0\|[0-9a-f]{24}$/);
    await server.stop();
    server = undefined;
    const durable = await target.open();
    try {
      for (const who of people) {
        const user = await durable.users.getByUsername('local', who.username);
        expect(user?.passwordHash, who.username).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      }
    } finally {
      await durable.close();
    }
    // The hash of a user who has signed in here since is the current one: importing again keeps it.
    const again = await importFile('realm-export.json', 'keycloak');
    expect(again.stdout).toContain('users: 0 created, 0 updated, 6 skipped, 2 refused');
  });
});
