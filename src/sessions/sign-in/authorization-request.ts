/**
 * The authorization request (RFC 6749 §4.1.1, RFC 7636, OIDC Core §3.1.2.1), validated in two
 * stages: first the client and the redirect URI (until both are trusted, errors must never
 * redirect), then everything else (errors go back to the trusted redirect URI).
 */
import type { Clock } from '../../clock.ts';
import { epochSeconds } from '../../clock.ts';
import { OAuthError } from '../../errors.ts';
import { SERVICE_SCOPES, parseScope } from '../../scopes.ts';
import type { ClientRecord } from '../../store/records.ts';
import { parseClaimsRequest, type ClaimsRequest } from '../../tokens/claims.ts';
import { verifyJwt } from '../../tokens/jwt.ts';
import type { KeyManager } from '../../tokens/keys.ts';
import { S256_CHALLENGE } from '../../tokens/pkce.ts';
import { assertParameterLengths, maxLengthOf, releasableClaims } from './request-limits.ts';

export type ResponseMode = 'query' | 'form_post' | 'fragment';
export type Prompt = 'none' | 'login' | 'select_account' | 'consent';

/** Where and how authorization responses (and errors, once trusted) are delivered. */
export interface AuthorizationTarget {
  /** The client the request is from (trusted: it is registered, and so is the redirect URI). */
  clientId: string;
  redirectUri: string;
  responseMode: ResponseMode;
  state: string | undefined;
}

export interface AuthorizationRequest extends AuthorizationTarget {
  clientId: string;
  scopes: string[];
  codeChallenge: string;
  nonce: string | undefined;
  prompt: Prompt[];
  /** Seconds. */
  maxAge: number | undefined;
  /** `sub` of a valid id_token_hint. */
  hintSubject: string | undefined;
  claims: ClaimsRequest | undefined;
}

type Params = Record<string, string>;

const RESPONSE_MODES: readonly ResponseMode[] = ['query', 'form_post', 'fragment'];
const PROMPTS: readonly Prompt[] = ['none', 'login', 'select_account', 'consent'];

const untrusted = (description: string) => new OAuthError('invalid_request', description, { redirectable: false });

/**
 * Stage one: the client must exist and the redirect URI must be one it registered, compared as
 * exact strings (RFC 6749 §3.1.2.3; OAuth 2.0 Security BCP §4.1.3).
 */
export async function trustTarget(
  params: Params,
  findClient: (clientId: string) => Promise<ClientRecord | undefined>,
): Promise<{ client: ClientRecord; target: AuthorizationTarget }> {
  if (!params.client_id) throw untrusted('The client_id parameter is required.');
  const client = await findClient(params.client_id);
  if (!client) throw untrusted('The client is unknown.');
  if (!params.redirect_uri) throw untrusted('The redirect_uri parameter is required.');
  if (!client.redirectUris.includes(params.redirect_uri)) throw untrusted('The redirect_uri is not registered for this client.');
  const mode = params.response_mode as ResponseMode | undefined;
  // A state beyond its bound is refused in stage two, and not echoed with the error.
  const state = params.state !== undefined && params.state.length <= maxLengthOf('state') ? params.state : undefined;
  return {
    client,
    target: { clientId: client.clientId, redirectUri: params.redirect_uri, responseMode: mode && RESPONSE_MODES.includes(mode) ? mode : 'query', state },
  };
}

/** What checking an id_token_hint takes: it must be an ID token this issuer signed. */
export interface HintVerification {
  issuer: string;
  keys: KeyManager;
  clock: Clock;
}

/** Stage two: every other rule of the authorize endpoint; errors here are redirectable. */
export async function validateAuthorizationRequest(
  params: Params,
  client: ClientRecord,
  target: AuthorizationTarget,
  deps: HintVerification,
): Promise<AuthorizationRequest> {
  if (!client.enabled) throw new OAuthError('unauthorized_client', 'The client is disabled.');
  assertParameterLengths(params);
  if (params.response_mode !== undefined && !RESPONSE_MODES.includes(params.response_mode as ResponseMode)) {
    throw new OAuthError('invalid_request', 'The response_mode is not supported.');
  }
  if (params.request !== undefined) throw new OAuthError('request_not_supported', 'Request objects are not supported.');
  if (params.request_uri !== undefined) throw new OAuthError('request_uri_not_supported', 'Request objects are not supported.');
  if (params.response_type === undefined) throw new OAuthError('invalid_request', 'The response_type parameter is required.');
  if (params.response_type !== 'code') throw new OAuthError('unsupported_response_type', 'Only the code response type is supported.');
  if (!client.grantTypes.includes('authorization_code')) {
    throw new OAuthError('unauthorized_client', 'The client may not use the authorization code flow.');
  }
  return {
    ...target,
    clientId: client.clientId,
    scopes: allowedScopes(params.scope, client),
    codeChallenge: codeChallenge(params),
    nonce: params.nonce,
    prompt: prompts(params.prompt),
    maxAge: maxAge(params.max_age),
    hintSubject: await hintSubject(params.id_token_hint, deps),
    claims: claimsRequest(params.claims),
  };
}

function allowedScopes(scope: string | undefined, client: ClientRecord): string[] {
  if (scope === undefined) throw new OAuthError('invalid_request', 'The scope parameter is required.');
  const scopes = parseScope(scope);
  if (scopes.length === 0) throw new OAuthError('invalid_request', 'The scope parameter is required.');
  const refused = scopes.find((s) => !client.scopes.includes(s) || SERVICE_SCOPES.has(s));
  if (refused !== undefined) throw new OAuthError('invalid_scope', `The client may not use the scope ${refused}.`);
  return scopes;
}

/** RFC 7636 §4.3 and RFC 9700 §2.1.1: PKCE with S256 on every request; `plain` is refused. */
function codeChallenge(params: Params): string {
  if (params.code_challenge === undefined) throw new OAuthError('invalid_request', 'The code_challenge parameter is required (PKCE).');
  if (params.code_challenge_method === undefined) throw new OAuthError('invalid_request', 'The code_challenge_method parameter is required and must be S256.');
  if (params.code_challenge_method !== 'S256') throw new OAuthError('invalid_request', 'The code_challenge_method must be S256.');
  if (!S256_CHALLENGE.test(params.code_challenge)) throw new OAuthError('invalid_request', 'The code_challenge is malformed.');
  return params.code_challenge;
}

function prompts(prompt: string | undefined): Prompt[] {
  if (prompt === undefined) return [];
  const values = [...new Set(prompt.split(' ').filter((p) => p !== ''))];
  if (values.some((p) => !PROMPTS.includes(p as Prompt))) throw new OAuthError('invalid_request', 'The prompt parameter has an unsupported value.');
  // OIDC Core §3.1.2.1: none with any other value is an error.
  if (values.includes('none') && values.length > 1) throw new OAuthError('invalid_request', 'prompt=none cannot be combined with other values.');
  return values as Prompt[];
}

function maxAge(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value)) throw new OAuthError('invalid_request', 'The max_age parameter must be a whole number of seconds.');
  return Number(value);
}

/** An id_token_hint must be an ID token this service issued; an expired one still names its user. */
async function hintSubject(hint: string | undefined, deps: HintVerification): Promise<string | undefined> {
  if (hint === undefined) return undefined;
  const payload = await verifyJwt(deps.keys, 'id', hint, { issuer: deps.issuer, now: epochSeconds(deps.clock), allowExpired: true });
  if (!payload?.sub) throw new OAuthError('invalid_request', 'The id_token_hint is not an ID token issued by this service.');
  return payload.sub;
}

function claimsRequest(value: string | undefined): ClaimsRequest | undefined {
  if (value === undefined) return undefined;
  const claims = parseClaimsRequest(value);
  if (!claims) throw new OAuthError('invalid_request', 'The claims parameter must be a JSON object with id_token and userinfo members.');
  return releasableClaims(claims);
}
