/**
 * The one error type of the protocol. Every OAuth 2.0 / OpenID Connect error the service can
 * answer with is an `OAuthError`; `routes/error-handler.ts` is the only place that turns it
 * into HTTP. This file imports nothing from src/.
 */

/** Error codes of RFC 6749, RFC 6750, RFC 7009, RFC 7662 and OpenID Connect Core that we emit. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'access_denied'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'slow_down'
  | 'server_error'
  | 'temporarily_unavailable';

const STATUS: Partial<Record<OAuthErrorCode, number>> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  slow_down: 429,
  server_error: 500,
  temporarily_unavailable: 503,
};

export interface OAuthErrorOptions {
  /** Logged, never sent: what exactly went wrong, for operators. */
  detail?: string;
  /** Whether the error may be delivered to a client's redirect URI (authorize endpoint). */
  redirectable?: boolean;
  /** Seconds, for 429 and 503 answers. */
  retryAfter?: number;
  /** For `insufficient_scope`: the scope the request needs (RFC 6750 §3, the challenge's `scope`). */
  scope?: string;
}

/** An error of the protocol, with a public description and a private detail. */
export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly description: string;
  readonly detail: string | undefined;
  readonly status: number;
  readonly redirectable: boolean;
  readonly retryAfter: number | undefined;
  readonly scope: string | undefined;

  constructor(code: OAuthErrorCode, description: string, options: OAuthErrorOptions = {}) {
    super(`${code}: ${description}`);
    this.name = 'OAuthError';
    this.code = code;
    this.description = description;
    this.detail = options.detail;
    this.status = STATUS[code] ?? 400;
    this.redirectable = options.redirectable ?? true;
    this.retryAfter = options.retryAfter;
    this.scope = options.scope;
  }
}

