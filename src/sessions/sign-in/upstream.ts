/**
 * The round trips to an upstream OpenID Connect provider, and their state: the sign-in (sent
 * there from the sign-in step, back at {IDP_BASE_URL}/signin/oidc/callback) and the sign-out
 * (sent there from end session, back at {IDP_BASE_URL}/signin/oidc/signed-out). Upstream errors
 * end on our error page, never as a crash or a half-made session.
 */
import { OAuthError } from '../../errors.ts';
import type { UpstreamChecks, UpstreamSource } from '../../sources/upstream-oidc.ts';
import type { EphemeralStore } from '../../store/types.ts';
import { randomToken } from '../../tokens/opaque.ts';
import { withQuery } from './authorization-response.ts';
import { trustRequestOf } from './account-sign-in.ts';
import type { SessionStore } from '../browser-session.ts';
import { withFullLifetime, type Interaction, type InteractionStore } from './interaction.ts';
import type { BrowserRequest, FlowResult } from './flow-types.ts';
import type { SignInFlow } from './sign-in-flow.ts';

const ROUND_TRIP_TTL_SECONDS = 15 * 60;

interface SignInTrip {
  interactionId: string;
  checks: UpstreamChecks;
}

/** Where sign-out goes once the upstream is done: the client's URI (with its state), or our page. */
export interface SignOutTrip {
  redirectUri?: string | undefined;
  state?: string | undefined;
}

export interface UpstreamDeps {
  upstream: UpstreamSource;
  baseUrl: string;
  ephemeral: EphemeralStore;
}

export interface UpstreamCallbackDeps extends UpstreamDeps {
  interactions: Pick<InteractionStore, 'load'>;
  sessions: Pick<SessionStore, 'loadBrowser'>;
  flow: SignInFlow;
}

const failure = (code: 'access_denied' | 'temporarily_unavailable' | 'invalid_request', description: string, detail: string) =>
  new OAuthError(code, description, { redirectable: false, detail });

/** Sends an interaction's browser to the upstream; the state ties the callback back to it. */
export async function startUpstreamSignIn(deps: Pick<UpstreamDeps, 'upstream' | 'ephemeral'>, interaction: Interaction): Promise<string> {
  const { url, checks } = await deps.upstream.start().catch((error: unknown) => {
    throw failure('temporarily_unavailable', 'The sign-in provider is unavailable. Try again in a moment.', String(error));
  });
  await deps.ephemeral.roundTrips.start('sign-in', checks.state, { interactionId: interaction.id, checks } satisfies SignInTrip, ROUND_TRIP_TTL_SECONDS);
  return url;
}

/**
 * The callback: the state (used once) names the interaction, which must belong to this
 * browser; the upstream's answer makes its user the pending one, and the flow goes on.
 */
export async function finishUpstreamSignIn(deps: UpstreamCallbackDeps, browser: BrowserRequest, state: string | undefined, callbackUrl: string): Promise<FlowResult> {
  const trip = state ? await deps.ephemeral.roundTrips.finish<SignInTrip>('sign-in', state) : undefined;
  if (!trip) throw failure('invalid_request', 'This sign-in cannot be completed: its state is unknown or was used. Start again from the application.', 'unknown upstream state');
  const interaction = await deps.interactions.load(trip.interactionId);
  const loaded = await deps.sessions.loadBrowser(browser.sessionId);
  if (!interaction || !loaded || loaded.key !== interaction.sessionKey) {
    throw failure('invalid_request', 'This sign-in was not started in this browser, or has expired.', 'upstream callback from another browser session');
  }
  const result = await deps.upstream.finish(new URL(callbackUrl, deps.baseUrl), trip.checks);
  if (!result.ok) {
    if (result.reason === 'denied') throw failure('access_denied', 'The sign-in provider did not sign you in.', result.detail);
    if (result.reason === 'unavailable') throw failure('temporarily_unavailable', 'The sign-in provider is unavailable. Try again in a moment.', result.detail);
    throw failure('invalid_request', 'The sign-in provider sent an answer that could not be verified.', result.detail);
  }
  const pending = { userId: result.user.id, username: result.user.username, amr: result.amr, enrolSecretSealed: null, upstreamIdToken: result.idToken };
  trustRequestOf(browser, interaction);
  const current = await deps.flow.loadFlowState({ interaction: withFullLifetime({ ...interaction, pending }), loaded }, { pendingUser: result.user });
  return deps.flow.saveAndAdvance(browser, current);
}

/** The upstream sign-out URL for a user who came from it, with our way back; undefined when there is none. */
export async function upstreamSignOutUrl(deps: UpstreamDeps, idToken: string | undefined, trip: SignOutTrip): Promise<string | undefined> {
  const key = randomToken();
  const url = await deps.upstream.endSessionUrl(idToken, `${deps.baseUrl}/signin/oidc/signed-out`, key);
  if (url) await deps.ephemeral.roundTrips.start('sign-out', key, trip, ROUND_TRIP_TTL_SECONDS);
  return url;
}

/** Back from the upstream's sign-out (the key used once): the client's URI to go to, or undefined for our page. */
export async function afterUpstreamSignOut(deps: Pick<UpstreamDeps, 'ephemeral'>, key: string | undefined): Promise<string | undefined> {
  const trip = key ? await deps.ephemeral.roundTrips.finish<SignOutTrip>('sign-out', key) : undefined;
  if (!trip?.redirectUri) return undefined;
  return withQuery(trip.redirectUri, trip.state !== undefined ? { state: trip.state } : {});
}
