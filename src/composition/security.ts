/**
 * What the routes use that is made from the opened stores, the master secrets and the
 * configuration, with no I/O of its own: codecs and keys derived from the secrets, the MFA
 * secrets, the sign-in throttle, the rate limiters, the password change and the account name.
 * Made once per process by openServices (services.ts), so every route shares one of each.
 */
import { changeOwnPassword } from '../admin/passwords.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { createAccountChange, type AccountChange } from '../factors/account-change.ts';
import type { RecoveryCodeDeps } from '../factors/recovery-codes.ts';
import { createSecurityNotices, type SecurityNotices } from '../mail/security-notices.ts';
import type { Mailer } from '../mail/mailer.ts';
import { mailBrandOf } from '../mail/setup.ts';
import { createPasskeys, type Passkeys } from '../factors/passkeys.ts';
import { createDeviceCookies, type DeviceCookies } from '../sessions/device-cookie.ts';
import { createMfaSecrets, type MfaSecrets } from '../factors/authenticator-app.ts';
import type { ChangeOwnPassword } from '../sessions/password-changed.ts';
import { createRateLimiter, type RateLimiter } from '../sessions/rate-limiters.ts';
import { createSignInThrottle, type SignInThrottle } from '../sessions/throttle.ts';
import { canonicalAccountName } from '../sources/account-name.ts';
import type { SignInSource } from '../sources/types.ts';
import type { CachedUsers } from '../store/users-cache.ts';
import type { DurableStore, EphemeralStore, FactorRepository } from '../store/types.ts';
import { createRefreshTokenCodec, type RefreshTokenCodec } from '../tokens/refresh-tokens.ts';
import type { RevocationList } from '../tokens/revocation-list.ts';
import { deriveKeyring, type Keyring, type MasterSecrets } from '../tokens/secret-box.ts';

export interface DerivedServices {
  /** Seals and opens refresh tokens under the 'refresh-tokens' keyring. */
  refreshTokenCodec: RefreshTokenCodec;
  /** The 'cookies' keyring: the CSRF token of the end-session confirmation is keyed with it. */
  csrfKey: Keyring;
  /** TOTP secrets, sealed under the 'totp-secrets' keyring. */
  mfa: MfaSecrets;
  /** Recovery codes, kept as hashes keyed with the 'recovery-codes' keyring. */
  recoveryCodes: RecoveryCodeDeps;
  /** Mail to users about security changes to their account. */
  notices: SecurityNotices;
  /** Passkey ceremonies: options and verification, challenges in the short-lived store. */
  passkeys: Passkeys;
  /** Failed sign-ins per account and address, per account, per address, per known device and per interaction (IDP_LOGIN_MAX_*). */
  throttle: SignInThrottle;
  /** Browsers that signed in to an account before, under the 'device-cookies' keyring. */
  deviceCookies: DeviceCookies;
  /** Authorization requests per source address (IDP_AUTHORIZE_RATE_LIMIT). */
  authorizeRateLimiter: RateLimiter;
  /** Token requests per client and per source address (IDP_TOKEN_RATE_LIMIT). */
  tokenRateLimiter: RateLimiter;
  /** Administration API calls per client (IDP_ADMIN_API_RATE_LIMIT). */
  adminApiRateLimiter: RateLimiter;
  /** A change of a user's account by the user, with its events, in one transaction (factors/account-change.ts). */
  accountChange: AccountChange;
  /** A local account's new password, with its event; undefined when it was taken, else what is wrong with it. */
  changePassword: ChangeOwnPassword;
  /** The name the sign-in source knows a typed username by (what the throttle counts and the audit names). */
  canonicalAccountName(typed: string): string;
}

export interface DerivedFrom {
  config: Config;
  secrets: MasterSecrets;
  clock: Clock;
  ephemeral: EphemeralStore;
  durable: Pick<DurableStore, 'transaction'>;
  users: Pick<CachedUsers, 'forget'>;
  factors: FactorRepository;
  revocations: RevocationList;
  source: SignInSource;
  mailer: Mailer;
}

export function deriveServices(from: DerivedFrom): DerivedServices {
  const { config, secrets, clock, ephemeral, durable, users, factors, revocations, source, mailer } = from;
  const accountChange = createAccountChange({ durable, clock, forget: (id) => users.forget(id) });
  // The name people know the service by (IDP_BRAND_NAME, else the host): in mail, in the
  // authenticator app's list, in the passkey prompt.
  const brand = mailBrandOf(config);
  return {
    refreshTokenCodec: createRefreshTokenCodec(deriveKeyring(secrets, 'refresh-tokens')),
    csrfKey: deriveKeyring(secrets, 'cookies'),
    mfa: createMfaSecrets({ key: deriveKeyring(secrets, 'totp-secrets'), ephemeral, factors, issuerName: brand.name }),
    recoveryCodes: { keys: deriveKeyring(secrets, 'recovery-codes'), factors, clock },
    notices: createSecurityNotices({ mailer, brand, clock }),
    passkeys: createPasskeys({
      relyingParty: { id: config.webauthn.rpId, origin: config.webauthn.origin, name: brand.name },
      challenges: ephemeral.passkeyChallenges,
      factors,
      clock,
    }),
    throttle: createSignInThrottle(ephemeral, {
      maxFailures: config.loginMaxFailures,
      maxFailuresPerAddress: config.loginMaxFailuresPerAddress,
      maxFailuresPerAccount: config.loginMaxFailuresPerAccount,
      maxAttemptsPerInteraction: config.loginMaxAttemptsPerInteraction,
    }),
    deviceCookies: createDeviceCookies(deriveKeyring(secrets, 'device-cookies'), clock),
    authorizeRateLimiter: createRateLimiter(ephemeral, clock, config.authorizeRateLimit),
    tokenRateLimiter: createRateLimiter(ephemeral, clock, config.tokenRateLimit),
    adminApiRateLimiter: createRateLimiter(ephemeral, clock, config.adminApiRateLimit),
    accountChange,
    changePassword: (userId, newPassword, confirm, via, audit) =>
      changeOwnPassword({ change: accountChange, clock, revocations }, { userId, newPassword, confirm, via }, audit),
    canonicalAccountName: (typed) => canonicalAccountName(source, typed),
  };
}
