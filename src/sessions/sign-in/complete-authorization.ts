/**
 * The end of an interaction: its code, issued once (the code is stored in the same atomic step
 * that deletes the interaction, by the one request that deletes it, so two racing requests
 * cannot both get one), delivered to the client in its response mode.
 */
import { OAuthError } from '../../errors.ts';
import { NAMESPACES, type EphemeralStore, type EphemeralWrite } from '../../store/types.ts';
import { authorizationResponse, type ClientResponse } from './authorization-response.ts';
import type { SessionStore } from '../browser-session.ts';
import type { FlowState } from './flow-types.ts';
import type { InteractionStore } from './interaction.ts';

export interface CompletionDeps {
  issuer: string;
  interactions: Pick<InteractionStore, 'finish' | 'finishWith'>;
  sessions: Pick<SessionStore, 'saveWrites'>;
  ephemeral: Pick<EphemeralStore, 'write' | 'codes'>;
}

/**
 * Issues the code (once per interaction) for the client. `writes` (a sign-in that just
 * finished) go out with the code's, in the step that finishes the interaction.
 */
export async function completeAuthorization(deps: CompletionDeps, current: FlowState, writes: EphemeralWrite[]): Promise<ClientResponse> {
  const { interaction, loaded, client, user, consented } = current;
  if (!user || loaded.session.authTime === null) {
    await deps.interactions.finish(interaction.id);
    return refuse(deps, writes);
  }
  // The request is the stored interaction's (it never changes once stored): the code is made
  // beforehand and stored only by the one caller that finishes the interaction.
  const { request } = interaction;
  const allowedScopes = client.requireConsent ? [...new Set([...consented, ...request.scopes])] : client.scopes;
  const { code, write } = deps.ephemeral.codes.create({
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
    browserSessionKey: loaded.key,
  });
  const whenFinished = loaded.session.clients.includes(client.clientId)
    ? [...writes, write]
    // The session as it is now, with this client: it replaces a write of the session in `writes`.
    : [...writes.filter((w) => !(w.op === 'set' && w.ns === NAMESPACES.session && w.key === loaded.key)), write,
      ...deps.sessions.saveWrites(loaded.key, { ...loaded.session, clients: [...loaded.session.clients, client.clientId] })];
  if (!(await deps.interactions.finishWith(interaction.id, { deleted: whenFinished, missing: writes }))) return refuse(deps, []);
  return authorizationResponse(request, deps.issuer, { code });
}

/** The sign-in itself stands (its cookie is set, `writes` are made); only this code is refused. */
async function refuse(deps: CompletionDeps, writes: EphemeralWrite[]): Promise<never> {
  if (writes.length > 0) await deps.ephemeral.write(writes);
  throw new OAuthError('invalid_request', 'This sign-in has already been completed.', { redirectable: false });
}
