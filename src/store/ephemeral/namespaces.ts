/**
 * Every namespace of the ephemeral store, declared once. A namespace keeps one kind of value
 * apart from the others (a key is `{ns}:{key}`); the store's methods take `Namespace`, so a
 * namespace not listed here does not compile. The strings are stored key names: changing one
 * orphans what is stored under it (instances of two releases share one Redis while they roll).
 */
export const NAMESPACES = {
  /** Authorization codes by their hash: the record of the sign-in that issued them (5 minutes). */
  code: 'code',
  /** What the first redemption of a code issued, by the code's hash, so that a replay can revoke it. */
  codeIssued: 'code-issued',
  /** A replay of a code that came in before its first redemption had recorded what it issued. */
  codeReplayed: 'code-reused',
  /** Browser sessions by the hash of their cookie's id. */
  session: 'session',
  /** Each user's browser sessions: an index (one key per user) of their store keys, by expiry. */
  userSessions: 'user-sessions',
  /** Authorization requests being signed in (the sign-in steps), by the hash of their id. */
  interaction: 'interaction',
  /** Sign-in attempts per account and per source address (the throttle's counts and locks). */
  signInAttempts: 'signin-attempts',
  /** TOTP codes already accepted, per user and time step, so that each is accepted once. */
  totpUsed: 'totp-used',
  /** Requests counted per subject and one-minute window (the token and authorize rate limits). */
  rate: 'rate',
  /** The round trip to an upstream OpenID provider at sign-in, by its `state`. */
  upstreamSignIn: 'upstream-sign-in',
  /** The round trip to an upstream OpenID provider at sign-out. */
  upstreamSignOut: 'upstream-sign-out',
  /** The email verification code a user asked for from the account page, by user id (15 minutes). */
  emailVerification: 'email-verification',
  /**
   * Password recoveries ("Forgot password") by the hash of their id: the account, the keyed hash
   * of the one-time code, the authorization request it came from (15 minutes).
   */
  passwordRecovery: 'password-recovery',
  /** Per account, the key of the recovery whose code is the good one: a new request voids the previous code. */
  passwordRecoveryCurrent: 'password-recovery-current',
  /**
   * The administration API's answers to POST requests with an Idempotency-Key, per calling
   * client and key (24 hours): a request sent again gets the first answer.
   */
  adminIdempotency: 'admin-idempotency',
  /** WebAuthn challenges by the browser (and ceremony) that asked for them: each taken once (5 minutes). */
  passkeyChallenge: 'passkey-challenge',
  /** Revoked access-token ids as releases before the durable revocation list kept them (read once at start). */
  revokedJti: 'revoked-jti',
  /** The administration console's sign-ins on their way through the authorization endpoint, by the hash of their `state` (10 minutes). */
  consoleSignIn: 'console-sign-in',
  /** The administration console's sessions by the hash of their cookie's id (15 minutes idle, 8 hours at most). */
  consoleSession: 'console-session',
} as const;

/** One namespace of the ephemeral store. */
export type Namespace = (typeof NAMESPACES)[keyof typeof NAMESPACES];
