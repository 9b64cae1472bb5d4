/** What every grant shares: scopes, the deps a grant may use, the token response. */
import type { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { AccessTokenRepository, CodeStore, EphemeralStore, GrantType, RefreshTokenRepository, UserRecord, UserRepository } from '../store/types.ts';
import type { KeyManager } from '../tokens/keys.ts';
import type { RefreshTokenCodec } from '../tokens/refresh-tokens.ts';
import type { RevocationList } from '../tokens/revocation.ts';
import type { AuthenticatedClient } from './client-auth.ts';

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

/** What the grants may use. */
export interface GrantDeps {
  issuer: string;
  clock: Clock;
  keys: KeyManager;
  ephemeral: EphemeralStore;
  codes: CodeStore;
  revocations: RevocationList;
  users: Pick<UserRepository, 'getById'>;
  /** The user as the sign-in source knows them now (a directory is asked again); undefined when gone. */
  currentUser(user: UserRecord): Promise<UserRecord | undefined>;
  refreshTokens: RefreshTokenRepository;
  refreshTokenCodec: RefreshTokenCodec;
  accessTokens: Pick<AccessTokenRepository, 'record'>;
  refreshLifetime: RefreshLifetime;
  /** Seconds a rotated-out refresh token still gets its successor response again. */
  refreshReuseGraceSeconds: number;
  /** An audit event (one log line operators can alert on). */
  audit(event: string, fields: Record<string, unknown>): void;
}

export interface Grant<P> {
  grantType: GrantType;
  paramsSchema: z.ZodType<P>;
  handle(params: P, client: AuthenticatedClient, deps: GrantDeps): Promise<TokenResponse>;
}
