/**
 * A real upstream OpenID Connect provider for the `oidc` sign-in source: the npm package
 * `oidc-provider` (written elsewhere, OpenID certified), run inside the test process on a
 * loopback port. Its issuer is exactly `http://127.0.0.1:PORT`. It knows one client, our
 * service (client_secret_post, the openid-client default), and a few accounts. Its quick-start
 * pages (devInteractions) are what a user sees there: a login form (`login`, `password`: any
 * password is taken), a consent form, an "[ Abort ]" link that ends the authorization with
 * `error=access_denied`, and a sign-out confirmation form at its end-session endpoint.
 *
 * The upstream follows OIDC Core §5.4 as shipped (conformIdTokenClaims): in the code flow the
 * ID token carries `sub` (and the protocol claims) only; profile, email and phone claims come
 * from its userinfo endpoint.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Account, type Configuration } from 'oidc-provider';
import { readForm, type Browser, type Page } from './browser-http.ts';
import { freePort } from './process.ts';

export interface UpstreamAccount {
  /** The login typed at the upstream; it is also the upstream `sub`. */
  sub: string;
  claims: Record<string, unknown>;
}

export interface UpstreamOptions {
  /** Our service's base URL ({IDP_BASE_URL}): the redirect URIs registered for it derive from it. */
  ourBaseUrl: string;
  clientId: string;
  clientSecret: string;
  accounts: UpstreamAccount[];
  /** Defaults to a free loopback port. */
  port?: number;
  /**
   * Puts the profile, email and phone claims into the ID token too (conformIdTokenClaims: false),
   * as many providers do; by default (false) they come from userinfo only, as OIDC Core §5.4 says.
   */
  claimsInIdToken?: boolean;
}

export interface UpstreamProvider {
  /** `http://127.0.0.1:PORT`, without a trailing slash, as the provider publishes it. */
  issuer: string;
  port: number;
  provider: Provider;
  /** Endpoints from its own discovery document (known once it has listened). */
  readonly authorizationEndpoint: string;
  readonly endSessionEndpoint: string;
  /** Whether it listens now. */
  readonly listening: boolean;
  /** Stops listening (open connections are cut): the upstream becomes unreachable. */
  stop(): Promise<void>;
  /** Listens again on the same port, with the same keys, clients and sessions. */
  start(): Promise<void>;
}

/** Creates the upstream and starts it listening. */
export async function startUpstreamProvider(options: UpstreamOptions): Promise<UpstreamProvider> {
  const upstream = await createUpstreamProvider(options);
  await upstream.start();
  return upstream;
}

/** Creates the upstream without listening yet: its issuer is known, it is unreachable until start(). */
export async function createUpstreamProvider(options: UpstreamOptions): Promise<UpstreamProvider> {
  const port = options.port ?? (await freePort());
  const issuer = `http://127.0.0.1:${port}`;
  const accounts = new Map(options.accounts.map((account) => [account.sub, account]));

  const configuration: Configuration = {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [`${options.ourBaseUrl}/signin/oidc/callback`],
        post_logout_redirect_uris: [`${options.ourBaseUrl}/signin/oidc/signed-out`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name'],
      email: ['email', 'email_verified'],
      phone: ['phone_number', 'phone_number_verified'],
    },
    // An unknown login is no account: the upstream asks to sign in again.
    findAccount(_ctx, sub): Account | undefined {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: () => ({ ...account.claims, sub }) };
    },
    conformIdTokenClaims: options.claimsInIdToken !== true,
    cookies: { keys: [randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      userinfo: { enabled: true },
    },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 120,
      IdToken: 600,
      Interaction: 600,
      Grant: 600,
      Session: 600,
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.proxy = false;

  let server: http.Server | undefined;
  let endpoints: { authorization: string; endSession: string } | undefined;
  async function start(): Promise<void> {
    if (server) return;
    const created = http.createServer(provider.callback());
    await new Promise<void>((resolve, reject) => {
      created.once('error', reject);
      created.listen(port, '127.0.0.1', () => resolve());
    });
    if ((created.address() as AddressInfo).port !== port) throw new Error('upstream listens on an unexpected port');
    server = created;
    if (!endpoints) {
      const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      if (discovery.issuer !== issuer) throw new Error(`upstream publishes issuer ${String(discovery.issuer)}, expected ${issuer}`);
      endpoints = { authorization: String(discovery.authorization_endpoint), endSession: String(discovery.end_session_endpoint) };
    }
  }
  const known = () => {
    if (!endpoints) throw new Error('the upstream has not listened yet');
    return endpoints;
  };
  async function stop(): Promise<void> {
    const current = server;
    if (!current) return;
    server = undefined;
    await new Promise<void>((resolve) => {
      current.close(() => resolve());
      current.closeAllConnections();
    });
  }

  return {
    issuer,
    port,
    provider,
    get authorizationEndpoint() {
      return known().authorization;
    },
    get endSessionEndpoint() {
      return known().endSession;
    },
    get listening() {
      return server !== undefined;
    },
    stop,
    start,
  };
}

// ---- The upstream's pages, driven the way a user without JavaScript would ----

/** The upstream's login page (devInteractions): a form with `login` and `password`. */
export function isUpstreamLoginPage(page: Page, upstream: Pick<UpstreamProvider, 'issuer'>): boolean {
  return page.status === 200 && page.url.startsWith(`${upstream.issuer}/`) && /name="prompt" value="login"/.test(page.body) && /name="login"/.test(page.body);
}

/** The upstream's consent page (devInteractions). */
export function isUpstreamConsentPage(page: Page, upstream: Pick<UpstreamProvider, 'issuer'>): boolean {
  return page.status === 200 && page.url.startsWith(`${upstream.issuer}/`) && /name="prompt" value="consent"/.test(page.body);
}

/** The upstream's sign-out confirmation (rpInitiatedLogout.logoutSource). */
export function isUpstreamLogoutPage(page: Page, upstream: Pick<UpstreamProvider, 'issuer'>): boolean {
  return page.status === 200 && page.url.startsWith(`${upstream.issuer}/`) && /id="op\.logoutForm"/.test(page.body) && /name="xsrf"/.test(page.body);
}

export async function submitUpstreamLogin(browser: Browser, page: Page, login: string, password = 'any password'): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.post(form.action, { ...form.fields, login, password });
}

export async function submitUpstreamConsent(browser: Browser, page: Page): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.post(form.action, form.fields);
}

/** Follows the "[ Abort ]" link of a login or consent page: the upstream answers access_denied. */
export async function abortAtUpstream(browser: Browser, page: Page): Promise<Page> {
  const href = /<a href="([^"]*\/abort)"/.exec(page.body)?.[1];
  if (!href) throw new Error(`no abort link in the upstream page: ${page.body.slice(0, 500)}`);
  return browser.get(new URL(href.replace(/&amp;/g, '&'), page.url).href);
}

/** Presses "Yes, sign me out" (the button carries logout=yes into the confirmation form). */
export async function confirmUpstreamLogout(browser: Browser, page: Page): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.post(form.action, { ...form.fields, logout: 'yes' });
}
