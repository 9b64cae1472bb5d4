/**
 * What every grant shares: the shape of a grant as the token endpoint sees it, the token
 * response, and the few services that signing a token needs. Each grant declares its own deps
 * beside its code; `defineGrant` binds a grant's schema to its handler, so the registry holds
 * grants of one type without casts.
 */
import type { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { Audit } from '../events/record.ts';
import type { AuthenticatedClient } from '../protocol/client-auth.ts';
import { parseParams, type Params } from '../protocol/params.ts';
import type { GrantType } from '../store/records.ts';
import type { KeyManager } from '../tokens/keys.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

export interface RefreshLifetime {
  /** A refresh token unused this long expires (sliding). */
  idleSeconds: number;
  /** A family ends this long after the sign-in, however often it is rotated. */
  absoluteSeconds: number;
}

/** What signing this service's tokens takes. */
export interface SigningDeps {
  issuer: string;
  clock: Clock;
  keys: KeyManager;
}

export interface Grant {
  grantType: GrantType;
  /** Parses the grant's own parameters (`invalid_request`), then answers with tokens or throws OAuthError. */
  handle(params: Params, client: AuthenticatedClient, audit: Audit): Promise<TokenResponse>;
}

/** A grant from its parameter schema and its handler of the parsed parameters. */
export function defineGrant<P>(
  grantType: GrantType,
  paramsSchema: z.ZodType<P>,
  handle: (params: P, client: AuthenticatedClient, audit: Audit) => Promise<TokenResponse>,
): Grant {
  return { grantType, handle: (params, client, audit) => handle(parseParams(paramsSchema, params), client, audit) };
}
