/**
 * The end of an interaction: its code, issued once (the interaction is taken from the store,
 * so two racing requests cannot both get one), delivered to the client in its response mode.
 */
import { OAuthError } from '../errors.ts';
import type { EphemeralStore, EphemeralWrite } from '../store/types.ts';
import { authorizationResponse, type ClientResponse } from './authorization-response.ts';
import type { SessionStore } from './browser-session.ts';
import type { FlowState } from './flow-result.ts';
import type { InteractionStore } from './interaction.ts';

export interface CompletionDeps {
  issuer: string;
  interactions: Pick<InteractionStore, 'finish'>;
  sessions: Pick<SessionStore, 'saveWrite'>;
  ephemeral: Pick<EphemeralStore, 'write' | 'codes'>;
}

/**
 * Issues the code (once per interaction) for the client. `writes` (a sign-in that just
 * finished) go out with the code's, in one batch.
 */
export async function completeAuthorization(deps: CompletionDeps, current: FlowState, writes: EphemeralWrite[]): Promise<ClientResponse> {
  const { interaction, loaded, client, user, consented } = current;
  const finished = await deps.interactions.finish(interaction.id);
  if (!finished || !user || loaded.session.authTime === null) {
    // The sign-in itself stands (its cookie is set); only this code is refused.
    await deps.ephemeral.write(writes);
    throw new OAuthError('invalid_request', 'This sign-in has already been completed.', { redirectable: false });
  }
  const { request } = finished;
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
  });
  const sessionWrites = loaded.session.clients.includes(client.clientId)
    ? []
    : [deps.sessions.saveWrite(loaded.key, { ...loaded.session, clients: [...loaded.session.clients, client.clientId] })];
  await deps.ephemeral.write([...writes, write, ...sessionWrites]);
  return authorizationResponse(request, deps.issuer, { code });
}
