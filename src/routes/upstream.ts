/**
 * The round trips to an upstream OpenID Connect provider: the sign-in callback
 * ({IDP_BASE_URL}/signin/oidc/callback) and the return from its end-session endpoint
 * ({IDP_BASE_URL}/signin/oidc/signed-out). Upstream errors end on our error page, never as a
 * crash or a half-made session.
 */
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../errors.ts';
import type { SessionStore } from '../sessions/browser-session.ts';
import { withFullLifetime, type Interaction, type InteractionStore } from '../sessions/interaction.ts';
import type { UpstreamChecks, UpstreamSource } from '../sources/oidc.ts';
import type { EphemeralStore } from '../store/types.ts';
import { NAMESPACES } from '../store/types.ts';
import { randomToken } from '../tokens/opaque.ts';
import { withQuery } from './shared/authorization-response.ts';
import { readSessionCookie } from './shared/cookies.ts';
import { renderPage, type PageContext } from './shared/pages.ts';
import type { SignInFlow } from './shared/sign-in-flow.ts';

const ROUND_TRIP_TTL_SECONDS = 15 * 60;
const NS = { signIn: NAMESPACES.upstreamSignIn, signOut: NAMESPACES.upstreamSignOut } as const;

interface SignInTrip {
  interactionId: string;
  checks: UpstreamChecks;
}

/** Where sign-out goes once the upstream is done: the client's URI (with its state), or our page. */
export interface SignOutTrip {
  redirectUri?: string | undefined;
  state?: string | undefined;
}

export interface UpstreamRouteOptions {
  upstream: UpstreamSource;
  baseUrl: string;
  page: PageContext;
  secureCookies: boolean;
  ephemeral: EphemeralStore;
  interactions: InteractionStore;
  sessions: SessionStore;
  flow: SignInFlow;
}

const failure = (code: 'access_denied' | 'temporarily_unavailable' | 'invalid_request', description: string, detail: string) =>
  new OAuthError(code, description, { redirectable: false, detail });

/** Sends an interaction's browser to the upstream; the state ties the callback back to it. */
export async function startUpstreamSignIn(options: Pick<UpstreamRouteOptions, 'upstream' | 'ephemeral'>, interaction: Interaction): Promise<string> {
  const { url, checks } = await options.upstream.start().catch((error: unknown) => {
    throw failure('temporarily_unavailable', 'The sign-in provider is unavailable. Try again in a moment.', String(error));
  });
  await options.ephemeral.set(NS.signIn, checks.state, { interactionId: interaction.id, checks } satisfies SignInTrip, ROUND_TRIP_TTL_SECONDS);
  return url;
}

/** The upstream sign-out URL for a user who came from it, with our way back; undefined when there is none. */
export async function upstreamSignOutUrl(options: Pick<UpstreamRouteOptions, 'upstream' | 'ephemeral' | 'baseUrl'>, idToken: string | undefined, trip: SignOutTrip): Promise<string | undefined> {
  const key = randomToken();
  const url = await options.upstream.endSessionUrl(idToken, `${options.baseUrl}/signin/oidc/signed-out`, key);
  if (url) await options.ephemeral.set(NS.signOut, key, trip, ROUND_TRIP_TTL_SECONDS);
  return url;
}

export async function upstreamRoutes(app: FastifyInstance, options: UpstreamRouteOptions): Promise<void> {
  const { upstream, ephemeral, interactions, sessions, flow } = options;
  const config = { page: true };

  app.get<{ Querystring: Record<string, string> }>('/signin/oidc/callback', { config }, async (request, reply) => {
    const state = typeof request.query.state === 'string' ? request.query.state : '';
    const trip = state ? await ephemeral.take<SignInTrip>(NS.signIn, state) : undefined;
    if (!trip) throw failure('invalid_request', 'This sign-in cannot be completed: its state is unknown or was used. Start again from the application.', 'unknown upstream state');
    const interaction = await interactions.load(trip.interactionId);
    const loaded = await sessions.loadBrowser(readSessionCookie(request, options.secureCookies));
    if (!interaction || !loaded || loaded.key !== interaction.sessionKey) {
      throw failure('invalid_request', 'This sign-in was not started in this browser, or has expired.', 'upstream callback from another browser session');
    }
    const result = await upstream.finish(new URL(request.url, options.baseUrl), trip.checks);
    if (!result.ok) {
      if (result.reason === 'denied') throw failure('access_denied', 'The sign-in provider did not sign you in.', result.detail);
      if (result.reason === 'unavailable') throw failure('temporarily_unavailable', 'The sign-in provider is unavailable. Try again in a moment.', result.detail);
      throw failure('invalid_request', 'The sign-in provider sent an answer that could not be verified.', result.detail);
    }
    const pending = { userId: result.user.id, username: result.user.username, amr: result.amr, enrolSecretSealed: null, upstreamIdToken: result.idToken };
    const updated = withFullLifetime({ ...interaction, pending });
    await interactions.save(updated);
    request.authorizationTarget = interaction.request;
    return flow.advance(reply, updated, loaded);
  });

  app.get<{ Querystring: Record<string, string> }>('/signin/oidc/signed-out', { config }, async (request, reply) => {
    const key = typeof request.query.state === 'string' ? request.query.state : '';
    const trip = key ? await ephemeral.take<SignOutTrip>(NS.signOut, key) : undefined;
    if (trip?.redirectUri) {
      return reply.header('cache-control', 'no-store').redirect(withQuery(trip.redirectUri, trip.state !== undefined ? { state: trip.state } : {}), 302);
    }
    return renderPage(reply, options.page, 'signed-out', { title: 'Signed out' });
  });
}
