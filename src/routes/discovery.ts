/** GET /.well-known/openid-configuration: OpenID Connect Discovery 1.0 §3 and RFC 8414 §2: the fields this service supports, nothing more. */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';

const AUTH_METHODS = ['client_secret_post', 'private_key_jwt', 'client_secret_basic'];

/** The discovery document. No registration, device, PAR, session-iframe or logout-channel fields. */
export function discoveryDocument(config: Pick<Config, 'baseUrl' | 'issuer'>): Record<string, unknown> {
  const base = config.baseUrl;
  return {
    issuer: config.issuer,
    authorization_endpoint: `${base}/connect/authorize`,
    token_endpoint: `${base}/connect/token`,
    userinfo_endpoint: `${base}/connect/userinfo`,
    introspection_endpoint: `${base}/connect/introspect`,
    revocation_endpoint: `${base}/connect/revoke`,
    end_session_endpoint: `${base}/connect/logout`,
    jwks_uri: `${base}/.well-known/jwks`,
    grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
    response_types_supported: ['code'],
    response_modes_supported: ['form_post', 'fragment', 'query'],
    scopes_supported: ['openid', 'offline_access', 'profile', 'email', 'phone', 'roles', 'admin_api', 'admin_api_readonly', 'admin_console_webhooks'],
    claims_supported: [
      'aud', 'exp', 'iat', 'iss', 'sub', 'name', 'given_name', 'family_name', 'preferred_username', 'email',
      'email_verified', 'phone_number', 'phone_number_verified', 'updated_at', 'auth_time', 'amr', 'acr', 'role', 'idp',
    ],
    id_token_signing_alg_values_supported: ['RS256'],
    code_challenge_methods_supported: ['plain', 'S256'],
    subject_types_supported: ['public'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    claims_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    acr_values_supported: ['urn:svc:ac:pwd', 'urn:svc:ac:mfa', 'urn:svc:ac:external'],
  };
}

export async function discoveryRoutes(app: FastifyInstance, options: { config: Config }): Promise<void> {
  // Serialised once: the document changes only with the configuration.
  const body = JSON.stringify(discoveryDocument(options.config));
  app.get('/.well-known/openid-configuration', async (_request, reply) =>
    reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .header('access-control-allow-origin', '*')
      .send(body),
  );
}
