/**
 * The account page signs its user in through the same sign-in pages as an application does: an
 * interaction whose "client" is the service itself. It carries `returnTo` (set only here, never
 * from a request), so the flow knows it is the account's: its client is ACCOUNT_CLIENT (never
 * looked up, so no row of the clients table can pose as it), it issues no code, its errors never
 * go anywhere but our own pages, and at the end the browser goes back to `returnTo`.
 */
import type { ClientRecord } from '../../store/records.ts';
import type { AuthorizationRequest } from './authorization-request.ts';
import type { BrowserRequest } from './flow-types.ts';
import type { Interaction } from './interaction.ts';

/** Not a valid client id of the clients table (which has no spaces): it never names a real client. */
const ACCOUNT_CLIENT_ID = 'account page';

/** What the sign-in pages show as the client: "to continue to your account". */
export const ACCOUNT_CLIENT: ClientRecord = {
  clientId: ACCOUNT_CLIENT_ID,
  displayName: 'your account',
  enabled: true,
  secretHash: null,
  secretExpiresAt: null,
  grantTypes: [],
  scopes: [],
  redirectUris: [],
  postLogoutRedirectUris: [],
  corsOrigins: [],
  accessTokenLifetime: 0,
  requireConsent: false,
};

/**
 * The request behind an account sign-in. `fresh`: the password (and second factor) are asked
 * again even with a session (prompt=login), as a security change needs a recent sign-in.
 */
export function accountSignInRequest(returnTo: string, fresh: boolean): AuthorizationRequest {
  return {
    clientId: ACCOUNT_CLIENT_ID,
    redirectUri: returnTo,
    responseMode: 'query',
    state: undefined,
    scopes: [],
    codeChallenge: '',
    nonce: undefined,
    prompt: fresh ? ['login'] : [],
    maxAge: undefined,
    hintSubject: undefined,
    claims: undefined,
  };
}

/** The account's interactions are ours: an error there is shown on our page, never sent back to a client. */
export function trustRequestOf(browser: BrowserRequest, interaction: Interaction): void {
  if (interaction.returnTo === undefined) browser.trust(interaction.request);
}
