/**
 * Moves an interaction forward: decides the next step (sessions/steps.ts) and either sends the
 * browser to the page for it or completes the authorization with a code for the client.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.ts';
import { epochSeconds } from '../../clock.ts';
import { OAuthError } from '../../errors.ts';
import { newCode } from '../../grants/authorization-code.ts';
import type { LoadedSession, SessionStore } from '../../sessions/browser-session.ts';
import { SESSION_TTL_SECONDS } from '../../sessions/browser-session.ts';
import type { AuthorizationRequest } from '../../sessions/authorization-request.ts';
import type { Interaction, InteractionStore, PendingSignIn } from '../../sessions/interaction.ts';
import { nextStep, type Step } from '../../sessions/steps.ts';
import type { SignInThrottle } from '../../sessions/throttle.ts';
import type { ClientsCache } from '../../store/clients-cache.ts';
import type { ClientRecord, ConsentRepository, EphemeralStore, EphemeralWrite, UserRecord, UserRepository } from '../../store/types.ts';
import type { RequestAudit } from './audit.ts';
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
  audit: RequestAudit;
  /** The account name a sign-in is about, as audit lines name it (sources/account-name.ts). */
  accountName(typed: string): string;
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

  /**
   * Starts an interaction for an authorization request in the browser's session. A browser
   * without one gets a cookie with a new id, but nothing is stored for it: a session is written
   * only at sign-in, and an anonymous visitor's interaction is short-lived (sessions/interaction.ts).
   */
  async function begin(request: FastifyRequest, reply: FastifyReply, authorizationRequest: AuthorizationRequest): Promise<unknown> {
    let loaded = await deps.sessions.loadBrowser(readSessionCookie(request, deps.secureCookies));
    if (!loaded) {
      const { sid, key, session } = deps.sessions.create();
      setSessionCookie(reply, sid, cookieSettings);
      loaded = { key, session };
    }
    const { interaction, write } = deps.interactions.create(authorizationRequest, loaded.key, loaded.session.userId === null);
    await deps.ephemeral.write([write]);
    return advance(reply, interaction, loaded);
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
   * (an id planted before sign-in is worthless: no session fixation). Returns the writes that
   * make it so, for the caller to send together with the rest of the step.
   */
  function finishSignIn(reply: FastifyReply, interaction: Interaction, loaded: LoadedSession, pending: PendingSignIn) {
    const now = epochSeconds(deps.clock);
    const sameUser = loaded.session.userId === pending.userId;
    const rotated = deps.sessions.rotation(loaded.key, {
      userId: pending.userId,
      authTime: now,
      amr: pending.amr,
      clients: sameUser ? loaded.session.clients : [],
      createdAt: now,
      upstreamIdToken: pending.upstreamIdToken,
    });
    setSessionCookie(reply, rotated.sid, cookieSettings);
    return {
      interaction: { ...interaction, sessionKey: rotated.key, signedInAt: now, pending: null },
      loaded: { key: rotated.key, session: rotated.session },
      writes: [...rotated.writes, deps.throttle.successWrite(pending.username)],
    };
  }

  function pageUrl(interaction: Interaction): string {
    return `${deps.basePath}/interaction/${encodeURIComponent(interaction.id)}`;
  }

  /**
   * After any change (`changed`: the interaction differs from what is stored): send the browser
   * to the page of the next step, or finish. What the step changed is written in one batch.
   */
  async function advance(reply: FastifyReply, interaction: Interaction, loaded: LoadedSession, changed = false): Promise<unknown> {
    let current = await state(interaction, loaded);
    let writes: EphemeralWrite[] = [];
    const pending = current.step === 'finish-sign-in' ? interaction.pending : null;
    if (pending) {
      const signedIn = finishSignIn(reply, interaction, loaded, pending);
      writes = signedIn.writes;
      current = await state(signedIn.interaction, signedIn.loaded);
    }
    const signedInAudit = () => pending && deps.audit(reply.request, 'sign_in', {
      result: 'success', username: deps.accountName(pending.username), user_id: pending.userId, amr: pending.amr,
    });
    if (current.step === 'done') {
      const completed = await complete(reply, current, writes);
      signedInAudit();
      return completed;
    }
    if (changed || pending) writes.push(deps.interactions.saveWrite(current.interaction));
    await deps.ephemeral.write(writes);
    signedInAudit();
    return reply.header('cache-control', 'no-store').redirect(pageUrl(interaction), 303);
  }

  /**
   * Issues the code (once per interaction) and delivers it to the client. `writes` (a sign-in
   * that just finished) go out with the code's, in one batch.
   */
  async function complete(reply: FastifyReply, current: FlowState, writes: EphemeralWrite[] = []): Promise<unknown> {
    const { interaction, loaded, client, user, consented } = current;
    const finished = await deps.interactions.finish(interaction.id);
    if (!finished || !user || loaded.session.authTime === null) {
      // The sign-in itself stands (its cookie is set); only this code is refused.
      await deps.ephemeral.write(writes);
      throw new OAuthError('invalid_request', 'This sign-in has already been completed.', { redirectable: false });
    }
    const { request } = finished;
    const allowedScopes = client.requireConsent ? [...new Set([...consented, ...request.scopes])] : client.scopes;
    const { code, write } = newCode({
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
    writes.push(write);
    if (!loaded.session.clients.includes(client.clientId)) {
      writes.push(deps.sessions.saveWrite(loaded.key, { ...loaded.session, clients: [...loaded.session.clients, client.clientId] }));
    }
    await deps.ephemeral.write(writes);
    return respondToClient(reply, request, deps.issuer, { code });
  }

  return { begin, state, advance, complete, pageUrl, cookieSettings, clock: deps.clock };
}

export type SignInFlow = ReturnType<typeof createSignInFlow>;
