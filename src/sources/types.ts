/** A sign-in source checks what a user typed (or brought back from elsewhere) and names the user. */
import type { UserRecord } from '../store/records.ts';
import type { UpstreamSource } from './upstream-oidc.ts';

/** Why a sign-in failed. `invalid_credentials` is the one answer for unknown users and wrong passwords. */
export type SignInFailure = 'invalid_credentials' | 'locked' | 'unavailable';

export type SignInResult =
  | { ok: true; user: UserRecord; amr: string[] }
  | { ok: false; reason: SignInFailure };

export interface PasswordSignInSource {
  readonly kind: 'local' | 'ldap';
  signIn(username: string, password: string): Promise<SignInResult>;
  /**
   * The account a typed name signs in to, as one name however it was typed (case, a domain):
   * what the sign-in throttle counts guesses against. Known without asking anyone, so unknown
   * names get it the same way.
   */
  canonicalAccountName(typed: string): string;
  /** The user as the source knows them now (for refresh and userinfo); undefined when gone. */
  currentUser(user: UserRecord): Promise<UserRecord | undefined>;
  /** Whether an outside source (the directory) answers; throws when it does not. */
  ping?(): Promise<void>;
}

/** The deployment's one sign-in source: a password checker, or an upstream provider. */
export type SignInSource = PasswordSignInSource | UpstreamSource;
