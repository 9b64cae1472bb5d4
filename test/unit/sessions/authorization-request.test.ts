/**
 * The authorization request's validation (src/sessions/sign-in/authorization-request.ts) as one table:
 * each row breaks one parameter of a valid request and names the error code expected, and
 * whether it may go back to the client (redirectable) or must end on our own page (the client
 * or its redirect URI not trusted yet). The valid request passes, so each row fails only by
 * what it breaks.
 */
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/errors.ts';
import { trustTarget, validateAuthorizationRequest, type HintVerification } from '../../../src/sessions/sign-in/authorization-request.ts';
import type { ClientRecord } from '../../../src/store/records.ts';
import type { KeyManager } from '../../../src/tokens/keys.ts';

const client: ClientRecord = {
  clientId: 'app', displayName: 'App', enabled: true, secretHash: null, secretExpiresAt: null, grantTypes: ['authorization_code', 'refresh_token'],
  scopes: ['openid', 'profile', 'admin_api'], redirectUris: ['https://app.example/cb'], postLogoutRedirectUris: [], corsOrigins: [],
  accessTokenLifetime: 600, requireConsent: false,
};

const valid: Record<string, string> = {
  client_id: 'app',
  redirect_uri: 'https://app.example/cb',
  response_type: 'code',
  scope: 'openid profile',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  state: 's-1',
};

/** No key is known: a hint shaped like an ID token is still not one of ours. */
const hintVerification: HintVerification = {
  issuer: 'https://idp.example',
  keys: { verificationKey: async () => undefined } as unknown as KeyManager,
  clock: () => 1_800_000_000_000,
};

const otherClients: Record<string, ClientRecord> = {
  app: client,
  disabled: { ...client, clientId: 'disabled', enabled: false },
  'no-code': { ...client, clientId: 'no-code', grantTypes: ['client_credentials'] },
};

/** The outcome of both stages: 'ok', or the error's code and whether it is redirectable. */
async function validate(params: Record<string, string>): Promise<string> {
  try {
    const { client: found, target } = await trustTarget(params, async (id) => otherClients[id]);
    await validateAuthorizationRequest(params, found, target, hintVerification);
    return 'ok';
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return `${error.code} ${error.redirectable ? 'redirectable' : 'page'}`;
  }
}

const without = (name: string) => Object.fromEntries(Object.entries(valid).filter(([key]) => key !== name));
const header = (typ: string, kid = 'k1') => Buffer.from(JSON.stringify({ alg: 'RS256', typ, kid })).toString('base64url');

const rows: Array<[string, Record<string, string>, string]> = [
  ['a valid request', valid, 'ok'],
  // Stage one: until the client and the redirect URI are trusted, errors never redirect.
  ['client_id missing', without('client_id'), 'invalid_request page'],
  ['client unknown', { ...valid, client_id: 'nobody' }, 'invalid_request page'],
  ['redirect_uri missing', without('redirect_uri'), 'invalid_request page'],
  ['redirect_uri not registered', { ...valid, redirect_uri: 'https://evil.example/cb' }, 'invalid_request page'],
  ['redirect_uri registered, but not as sent (prefix)', { ...valid, redirect_uri: 'https://app.example/cb/more' }, 'invalid_request page'],
  // Stage two: back to the client.
  ['the client is disabled', { ...valid, client_id: 'disabled' }, 'unauthorized_client redirectable'],
  ['a value longer than 2048 characters', { ...valid, ui_locales: 'u'.repeat(2049) }, 'invalid_request redirectable'],
  ['a state longer than 1024 characters', { ...valid, state: 's'.repeat(1025) }, 'invalid_request redirectable'],
  ['a nonce longer than 512 characters', { ...valid, nonce: 'n'.repeat(513) }, 'invalid_request redirectable'],
  ['response_mode unsupported', { ...valid, response_mode: 'web_message' }, 'invalid_request redirectable'],
  ['a request object', { ...valid, request: 'eyJ...' }, 'request_not_supported redirectable'],
  ['a request_uri', { ...valid, request_uri: 'https://app.example/r' }, 'request_uri_not_supported redirectable'],
  ['response_type missing', without('response_type'), 'invalid_request redirectable'],
  ['response_type token', { ...valid, response_type: 'token' }, 'unsupported_response_type redirectable'],
  ['the client may not use the code flow', { ...valid, client_id: 'no-code' }, 'unauthorized_client redirectable'],
  ['scope missing', without('scope'), 'invalid_request redirectable'],
  ['scope of spaces only', { ...valid, scope: '   ' }, 'invalid_request redirectable'],
  ['a scope the client may not use', { ...valid, scope: 'openid email' }, 'invalid_scope redirectable'],
  ['a service scope, even when registered', { ...valid, scope: 'openid admin_api' }, 'invalid_scope redirectable'],
  ['code_challenge missing', without('code_challenge'), 'invalid_request redirectable'],
  ['code_challenge_method missing', without('code_challenge_method'), 'invalid_request redirectable'],
  ['code_challenge_method plain', { ...valid, code_challenge_method: 'plain' }, 'invalid_request redirectable'],
  ['code_challenge malformed', { ...valid, code_challenge: 'short' }, 'invalid_request redirectable'],
  ['prompt with an unknown value', { ...valid, prompt: 'login maybe' }, 'invalid_request redirectable'],
  ['prompt=none with another value', { ...valid, prompt: 'none login' }, 'invalid_request redirectable'],
  ['max_age not a number', { ...valid, max_age: '1h' }, 'invalid_request redirectable'],
  ['max_age negative', { ...valid, max_age: '-1' }, 'invalid_request redirectable'],
  ['id_token_hint not a JWT', { ...valid, id_token_hint: 'not-a-token' }, 'invalid_request redirectable'],
  ['id_token_hint signed by a key we do not know', { ...valid, id_token_hint: `${header('JWT')}.e30.c2ln` }, 'invalid_request redirectable'],
  ['claims not JSON', { ...valid, claims: '{' }, 'invalid_request redirectable'],
  ['claims not an object', { ...valid, claims: '[]' }, 'invalid_request redirectable'],
  ['claims asking a claim with a value that is no object', { ...valid, claims: '{"userinfo":{"email":true}}' }, 'invalid_request redirectable'],
  // What is valid beside the required parameters.
  ['prompt=login consent', { ...valid, prompt: 'login consent' }, 'ok'],
  ['max_age=0', { ...valid, max_age: '0' }, 'ok'],
  ['response_mode form_post', { ...valid, response_mode: 'form_post' }, 'ok'],
  ['a claims request', { ...valid, claims: '{"userinfo":{"email":null}}' }, 'ok'],
];

describe('authorization request validation', () => {
  it.each(rows.map(([name, params, expected]) => ({ name, params, expected })))('$name -> $expected', async ({ params, expected }) => {
    expect(await validate(params)).toBe(expected);
  });
});
