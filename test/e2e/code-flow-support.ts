/**
 * Shared by the authorization code suites: the seed (clients and users every suite relies on),
 * served either by one spawned server per file on its own PostgreSQL database or by the app in
 * the test's process (test/app/), and the relying-party helpers that drive it from outside.
 */
import { Browser, readForm, type Page } from '../helpers/browser-http.ts';
import { startInProcess } from '../helpers/in-process.ts';
import { seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, runSql } from '../helpers/services.ts';
import { basic, pkce, type Pkce } from '../helpers/oauth.ts';

export { basic, pkce, type Pkce };

export const IDP_SECRET = 'd'.repeat(64);

export const WEB_SECRET = 'web-secret-0123456789abcdefghijklmnop';
export const OTHER_SECRET = 'other-secret-0123456789abcdefghijklmnop';
export const NO_REFRESH_SECRET = 'norefresh-secret-0123456789abcdefghijkl';
export const CONSENT_SECRET = 'consent-secret-0123456789abcdefghijklmn';
export const DISABLE_SECRET = 'disable-secret-0123456789abcdefghijklmn';
/** RFC 6749 §2.3.1: id and secret are form-encoded before Basic; these need it ('+', '%', ':', ' '). */
export const ENC_CLIENT_ID = 'enc:client';
export const ENC_SECRET = 'p+s%25:w rd/0123456789abcdefghijklmnopq';

export const WEB_REDIRECT = 'https://rp.test/cb';
export const SPA_REDIRECT = 'https://spa.test/cb';
export const NO_REFRESH_REDIRECT = 'https://norefresh.test/cb';
export const CONSENT_REDIRECT = 'https://consent.test/cb';
export const DISABLE_REDIRECT = 'https://disabled.test/cb';

export const ALICE = { username: 'alice', password: 'correct horse battery staple' };
export const BOB = { username: 'bob', password: 'his own long password 42' };

export const SEED = {
  api_scopes: ['orders.read'],
  clients: [
    {
      client_id: 'web', client_secret: WEB_SECRET, display_name: 'Web shop',
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'phone', 'roles', 'offline_access', 'orders.read'],
      redirect_uris: [WEB_REDIRECT], access_token_lifetime: 900, require_consent: false,
    },
    {
      client_id: 'spa', display_name: 'Single page app',
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'roles', 'offline_access'],
      redirect_uris: [SPA_REDIRECT], require_consent: false,
    },
    {
      // May not use phone or profile: claims of those scopes are never released to it.
      client_id: 'no-refresh', client_secret: NO_REFRESH_SECRET, display_name: 'No refresh',
      grant_types: ['authorization_code'],
      scopes: ['openid', 'email', 'offline_access'],
      redirect_uris: [NO_REFRESH_REDIRECT], require_consent: false,
    },
    {
      client_id: 'consenting', client_secret: CONSENT_SECRET, display_name: 'Consenting app',
      grant_types: ['authorization_code'],
      scopes: ['openid', 'profile', 'email', 'phone'],
      redirect_uris: [CONSENT_REDIRECT], require_consent: true,
    },
    {
      // Registers the same redirect URI as `web`: a code of `web` differs from its own only by client.
      client_id: 'other', client_secret: OTHER_SECRET, display_name: 'Other app',
      grant_types: ['authorization_code', 'client_credentials'],
      scopes: ['openid', 'orders.read'],
      redirect_uris: [WEB_REDIRECT],
    },
    {
      client_id: ENC_CLIENT_ID, client_secret: ENC_SECRET, display_name: 'Encoded credentials',
      grant_types: ['client_credentials'], scopes: ['orders.read'],
    },
    {
      client_id: 'to-disable', client_secret: DISABLE_SECRET, display_name: 'Soon disabled',
      grant_types: ['authorization_code'], scopes: ['openid'],
      redirect_uris: [DISABLE_REDIRECT],
    },
  ],
  users: [
    {
      ...ALICE, given_name: 'Alice', family_name: 'Liddell', name: 'Alice Liddell',
      email: 'alice@example.com', email_verified: true,
      phone_number: '+15555550100', phone_number_verified: false,
      roles: ['admin', 'buyer'],
    },
    // No email, no phone, one role.
    { ...BOB, given_name: 'Bob', family_name: 'Builder', name: 'Bob Builder', roles: ['viewer'] },
  ],
};

/** A seeded service, spawned or in process. */
export interface Setup {
  base: string;
  issuer: string;
  /** SQL on the service's database, as an administrator would run it. */
  sql(text: string, values?: unknown[]): Promise<unknown[]>;
  stop(): Promise<void>;
}

/** The seed, in the app in this process (on an embedded database of its own). */
export async function startSeededApp(): Promise<Setup> {
  const app = await startInProcess({ seed: SEED });
  return { base: app.base, issuer: app.issuer, sql: app.sql, stop: app.close };
}

/** A fresh database, seeded, and one server on it. */
export async function startSeededServer(): Promise<Setup> {
  const db = await createMigratedTestDatabase();
  const env = { DATABASE_URL: db.url, IDP_SECRET };
  let server: RunningServer | undefined;
  try {
    server = await startServer(env);
    await seedWith(SEED, env);
  } catch (error) {
    await server?.stop();
    await db.drop();
    throw error;
  }
  const running = server;
  return {
    base: running.url,
    issuer: `${running.url}/`,
    sql: (text, values) => runSql(db.url, text, values),
    async stop() {
      await running.stop();
      await db.drop();
    },
  };
}


export {
  authorizeThroughPages, authorizeUrl, codeFrom, codeRequest, decodeJwt, expectConsentPage, expectSignInPage, isConsentPage, isSignInPage,
  postForm, redeem, submitConsent, submitSignIn, userinfo, type HttpResponse,
} from '../helpers/relying-party.ts';

export { Browser, readForm, type Page };
