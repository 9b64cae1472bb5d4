/**
 * How much an authorization request may carry. An anonymous browser's request is kept for ten
 * minutes without anyone signing in, and its values are echoed into redirects and pages: these
 * bounds keep what one request can make the service store and send small (README, Account
 * protection, "Authorization request limits").
 */
import { OAuthError } from '../../errors.ts';
import { SCOPE_CLAIMS, type ClaimsRequest } from '../../tokens/claims.ts';

/**
 * Characters per parameter where the general bound is more than a client needs: `state` and
 * `nonce` are kept with the request; `login_hint` names an account.
 */
const PARAMETER_LIMITS: ReadonlyMap<string, number> = new Map([
  ['state', 1024],
  ['nonce', 512],
  ['login_hint', 512],
]);
/** Characters of any other parameter (`claims`, `scope`, `id_token_hint`, ...). */
const MAX_VALUE_LENGTH = 2048;

/** The most characters `name` may have. */
export function maxLengthOf(name: string): number {
  return PARAMETER_LIMITS.get(name) ?? MAX_VALUE_LENGTH;
}

/** Refuses (invalid_request, naming it) the first parameter longer than its bound. */
export function assertParameterLengths(params: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(params)) {
    const max = maxLengthOf(name);
    if (value.length > max) throw new OAuthError('invalid_request', `The ${name} parameter is too long (at most ${max} characters).`);
  }
}

const RELEASABLE_CLAIMS: ReadonlySet<string> = new Set(Object.values(SCOPE_CLAIMS).flat());

/**
 * Only the claims the service can release are kept: any other name would never be released
 * (OIDC Core §5.5.1 lets it be ignored), and each kept name is stored with the request, its code
 * and its refresh token family.
 */
export function releasableClaims(claims: ClaimsRequest): ClaimsRequest {
  return {
    id_token: claims.id_token.filter((name) => RELEASABLE_CLAIMS.has(name)),
    userinfo: claims.userinfo.filter((name) => RELEASABLE_CLAIMS.has(name)),
  };
}
