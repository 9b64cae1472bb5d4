/**
 * An upstream OpenID Connect provider as the sign-in source (openid-client): the authorization
 * code flow with PKCE, state and nonce, the upstream ID token validated by openid-client. The
 * user keeps the upstream `sub` unchanged; a local record (source 'oidc') holds consent and flags.
 */
import * as client from 'openid-client';
import type { UpstreamConfig } from '../config.ts';
import { hasControlCharacters } from '../control-characters.ts';
import { emailAddressOrNull } from '../email-address.ts';
import type { UserRecord } from '../store/records.ts';
import type { UserRepository } from '../store/types.ts';
import { randomToken } from '../tokens/opaque.ts';

/** What the browser's round trip to the upstream must bring back (kept with the interaction). */
export interface UpstreamChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export type UpstreamResult =
  | { ok: true; user: UserRecord; amr: string[]; idToken: string | undefined }
  | { ok: false; reason: 'denied' | 'unavailable' | 'invalid'; detail: string };

export interface UpstreamSource {
  readonly kind: 'oidc';
  /** Where to send the browser, and the checks to keep for the callback. */
  start(): Promise<{ url: string; checks: UpstreamChecks }>;
  /** Completes the sign-in from the callback URL; never throws. */
  finish(callbackUrl: URL, checks: UpstreamChecks): Promise<UpstreamResult>;
  /** The upstream's end-session URL for a user who came from it, or undefined when it has none. */
  endSessionUrl(idToken: string | undefined, postLogoutRedirectUri: string, state: string): Promise<string | undefined>;
  currentUser(user: UserRecord): Promise<UserRecord | undefined>;
  ping(): Promise<void>;
}

const UPSTREAM_SCOPES = 'openid profile email phone';

/** Discovery is redone after this long, so a changed upstream configuration is picked up. */
const DISCOVERY_TTL_MS = 10 * 60 * 1000;
const UPSTREAM_TIMEOUT_SECONDS = 5;

export function createUpstreamSource(config: UpstreamConfig, users: UserRepository, redirectUri: string): UpstreamSource {
  let discovered: { at: number; configuration: Promise<client.Configuration> } | undefined;
  const discover = () =>
    client.discovery(new URL(config.issuer), config.clientId, config.clientSecret, undefined, {
      // Plain http only for an upstream on loopback (development and tests).
      execute: new URL(config.issuer).protocol === 'http:' ? [client.allowInsecureRequests] : [],
      timeout: UPSTREAM_TIMEOUT_SECONDS,
    });
  const configuration = (): Promise<client.Configuration> => {
    if (!discovered || Date.now() - discovered.at > DISCOVERY_TTL_MS) {
      const entry = { at: Date.now(), configuration: discover() };
      entry.configuration.catch(() => {
        if (discovered === entry) discovered = undefined;
      });
      discovered = entry;
    }
    return discovered.configuration;
  };
  /** Asks the upstream now (not the cached copy): is it there? */
  const reachable = async (): Promise<void> => {
    const response = await fetch(new URL('.well-known/openid-configuration', config.issuer.endsWith('/') ? config.issuer : `${config.issuer}/`), {
      signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_SECONDS * 1000),
    });
    if (!response.ok) throw new Error(`upstream discovery answered ${response.status}`);
  };

  return {
    kind: 'oidc',
    async start() {
      // A sign-in is sent to the upstream only while it answers: else our page says so.
      await reachable();
      const checks: UpstreamChecks = { state: randomToken(), nonce: randomToken(), codeVerifier: client.randomPKCECodeVerifier() };
      const url = client.buildAuthorizationUrl(await configuration(), {
        redirect_uri: redirectUri,
        scope: UPSTREAM_SCOPES,
        response_type: 'code',
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, checks };
    },
    async finish(callbackUrl, checks) {
      const error = callbackUrl.searchParams.get('error');
      if (error) return { ok: false, reason: 'denied', detail: `upstream answered ${error}` };
      try {
        const tokens = await client.authorizationCodeGrant(await configuration(), callbackUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (!claims) return { ok: false, reason: 'invalid', detail: 'no ID token from the upstream' };
        // OIDC Core §2: sub is at most 255 ASCII characters; it becomes the username, so it is not dropped but refused.
        if (hasControlCharacters(claims.sub)) return { ok: false, reason: 'invalid', detail: 'the upstream sub holds control characters' };
        // OIDC Core §5.4: in the code flow, profile claims may be released at userinfo only.
        const userinfo = await client.fetchUserInfo(await configuration(), tokens.access_token, claims.sub).catch(() => undefined);
        const user = await keepLocalRecord(users, { ...claims, ...userinfo, sub: claims.sub });
        if (user.locked) return { ok: false, reason: 'denied', detail: `local record of ${user.subject} is locked` };
        return { ok: true, user, amr: ['external'], idToken: tokens.id_token };
      } catch (caught) {
        const detail = caught instanceof Error ? caught.message : String(caught);
        const unreachable = caught instanceof TypeError || /fetch|ECONN|timeout|network/i.test(detail);
        return { ok: false, reason: unreachable ? 'unavailable' : 'invalid', detail };
      }
    },
    async endSessionUrl(idToken, postLogoutRedirectUri, state) {
      const upstream = await configuration().catch(() => undefined);
      if (!upstream?.serverMetadata().end_session_endpoint) return undefined;
      return client.buildEndSessionUrl(upstream, {
        post_logout_redirect_uri: postLogoutRedirectUri,
        state,
        client_id: config.clientId,
        ...(idToken ? { id_token_hint: idToken } : {}),
      }).href;
    },
    currentUser: (user) => users.getById(user.id),
    ping: reachable,
  };
}

/**
 * A profile claim as stored. One holding control characters or bidi overrides (a terminal
 * escape, a spoofed name) is dropped, not stored: the sign-in goes on without that claim, since
 * the person signing in is not the one who chose it wrongly, and no administrator's terminal
 * or relying party ever receives it.
 */
function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && !hasControlCharacters(value) ? value : null;
}

/** Creates or refreshes the local record of an upstream user, keeping local flags and consents. */
async function keepLocalRecord(users: UserRepository, claims: Record<string, unknown> & { sub: string }): Promise<UserRecord> {
  const subject = claims.sub;
  const existing = await users.getBySubject('oidc', subject);
  // An `email` that is not a bare address is dropped, and with it the provider's word that it is verified.
  const email = emailAddressOrNull(claims.email);
  const profile = {
    givenName: text(claims.given_name),
    familyName: text(claims.family_name),
    name: text(claims.name),
    email,
    emailVerified: email !== null && claims.email_verified === true,
    phoneNumber: text(claims.phone_number),
    phoneNumberVerified: claims.phone_number_verified === true,
  };
  if (existing) {
    await users.update(existing.id, profile);
  } else {
    await users.upsert({
      id: randomToken(16),
      source: 'oidc',
      subject,
      // The upstream sub is unique; a preferred_username may be reused there over time.
      username: subject,
      passwordHash: null,
      ...profile,
      roles: [],
      locked: false,
      mustChangePassword: false,
      mustEnrolMfa: false,
    });
  }
  const user = await users.getBySubject('oidc', subject);
  if (!user) throw new Error('local record of the upstream user vanished');
  return user;
}
