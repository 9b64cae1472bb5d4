/**
 * Moves an interaction forward: decides the next step (sessions/steps.ts) and either sends the
 * browser to the page for it or completes the authorization with a code for the client.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.ts';
import { epochSeconds } from '../../clock.ts';
import { OAuthError } from '../../errors.ts';
import { issueCode } from '../../grants/authorization-code.ts';
import type { LoadedSession, SessionStore } from '../../sessions/browser-session.ts';
import { SESSION_TTL_SECONDS } from '../../sessions/browser-session.ts';
import type { Interaction, InteractionStore } from '../../sessions/interaction.ts';
import { nextStep, type Step } from '../../sessions/steps.ts';
import type { SignInThrottle } from '../../sessions/throttle.ts';
import type { ClientsCache } from '../../store/clients-cache.ts';
import type { ClientRecord, ConsentRepository, EphemeralStore, UserRecord, UserRepository } from '../../store/types.ts';
import { respondToClient } from './authorization-response.ts';
import { readSessionCookie, setSessionCookie } from './cookies.ts';

export interface FlowDeps {
  issuer: string;
  basePath: string;
  secureCookies: boolean;
  clock: Clock;
  clients: ClientsCache;
  users: Pick<UserRepository, 'getById'>;
  consents: ConsentRepository;
  sessions: SessionStore;
  interactions: InteractionStore;
  ephemeral: EphemeralStore;
  throttle: SignInThrottle;
  audit(event: string, fields: Record<string, unknown>): void;
}

export interface FlowState {
  interaction: Interaction;
  loaded: LoadedSession;
  client: ClientRecord;
  user: UserRecord | undefined;
  pendingUser: UserRecord | undefined;
  consented: string[];
  step: Step;
}

export function createSignInFlow(deps: FlowDeps) {
  const cookieSettings = { secure: deps.secureCookies, maxAgeSeconds: SESSION_TTL_SECONDS };

  /** The browser's session, started (anonymous) when it has none. */
  async function browserSession(request: FastifyRequest, reply: FastifyReply): Promise<LoadedSession> {
    const loaded = await deps.sessions.load(readSessionCookie(request, deps.secureCookies));
    if (loaded) return loaded;
    const { sid, key, session } = await deps.sessions.start();
    setSessionCookie(reply, sid, cookieSettings);
    return { key, session };
  }

  /** Where the interaction stands now (a disabled client ends it with unauthorized_client). */
  async function state(interaction: Interaction, loaded: LoadedSession): Promise<FlowState> {
    const client = await deps.clients.get(interaction.request.clientId);
    if (!client?.enabled) throw new OAuthError('unauthorized_client', 'The client is disabled.');
    const [user, pendingUser] = await Promise.all([
      loaded.session.userId ? deps.users.getById(loaded.session.userId) : undefined,
      interaction.pending ? deps.users.getById(interaction.pending.userId) : undefined,
    ]);
    const consented = user ? await deps.consents.get(user.id, client.clientId) : [];
    const step = nextStep({ interaction, session: loaded.session, user, pendingUser, client, consented, now: epochSeconds(deps.clock) });
    return { interaction, loaded, client, user, pendingUser, consented, step };
  }

  /**
   * The pending user passed every step: the browser session becomes theirs, under a new id
   * (an id planted before sign-in is worthless: no session fixation).
   */
  async function finishSignIn(reply: FastifyReply, interaction: Interaction, loaded: LoadedSession): Promise<{ interaction: Interaction; loaded: LoadedSession }> {
    const pending = interaction.pending;
    if (!pending) return { interaction, loaded };
    const now = epochSeconds(deps.clock);
    const sameUser = loaded.session.userId === pending.userId;
    const rotated = await deps.sessions.rotate(loaded.key, {
      userId: pending.userId,
      authTime: now,
      amr: pending.amr,
      clients: sameUser ? loaded.session.clients : [],
      createdAt: now,
      upstreamIdToken: pending.upstreamIdToken,
    });
    setSessionCookie(reply, rotated.sid, cookieSettings);
    await deps.throttle.recordSuccess(pending.username);
    deps.audit('sign_in', { result: 'success', user_id: pending.userId, amr: pending.amr });
    const updated = { ...interaction, sessionKey: rotated.key, signedInAt: now, pending: null };
    await deps.interactions.save(updated);
    return { interaction: updated, loaded: rotated };
  }

  function pageUrl(interaction: Interaction): string {
    return `${deps.basePath}/interaction/${encodeURIComponent(interaction.id)}`;
  }

  /** After any change: send the browser to the page of the next step, or finish. */
  async function advance(reply: FastifyReply, interaction: Interaction, loaded: LoadedSession): Promise<unknown> {
    let current = await state(interaction, loaded);
    if (current.step === 'finish-sign-in') {
      const signedIn = await finishSignIn(reply, interaction, loaded);
      current = await state(signedIn.interaction, signedIn.loaded);
    }
    if (current.step !== 'done') return reply.header('cache-control', 'no-store').redirect(pageUrl(interaction), 303);
    return complete(reply, current);
  }

  /** Issues the code (once per interaction) and delivers it to the client. */
  async function complete(reply: FastifyReply, current: FlowState): Promise<unknown> {
    const { interaction, loaded, client, user, consented } = current;
    const finished = await deps.interactions.finish(interaction.id);
    if (!finished || !user || loaded.session.authTime === null) {
      throw new OAuthError('invalid_request', 'This sign-in has already been completed.', { redirectable: false });
    }
    const { request } = finished;
    const allowedScopes = client.requireConsent ? [...new Set([...consented, ...request.scopes])] : client.scopes;
    const code = await issueCode(deps, {
      clientId: client.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      userId: user.id,
      scopes: request.scopes,
      authTime: loaded.session.authTime,
      amr: loaded.session.amr,
      nonce: request.nonce,
      claims: request.claims,
      allowedScopes,
    });
    if (!loaded.session.clients.includes(client.clientId)) {
      await deps.sessions.save(loaded.key, { ...loaded.session, clients: [...loaded.session.clients, client.clientId] });
    }
    return respondToClient(reply, request, deps.issuer, { code });
  }

  return { browserSession, state, advance, complete, pageUrl, cookieSettings, clock: deps.clock };
}

export type SignInFlow = ReturnType<typeof createSignInFlow>;
