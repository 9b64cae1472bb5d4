/**
 * Passkeys (WebAuthn) as a second factor: the options a browser hands to its authenticator, and
 * the verification of what comes back, for registration and for sign-in. The relying party id
 * and the one expected origin come from the configuration (IDP_BASE_URL, IDP_WEBAUTHN_RP_ID),
 * never from a request. User verification is required; attestation is 'none'. Each challenge
 * lives 5 minutes in the short-lived store, under the browser (and ceremony) that asked, and is
 * taken once, so any instance verifies it and none twice.
 */
import {
  generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse,
  type AuthenticationResponseJSON, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isIP } from 'node:net';
import type { Clock } from '../clock.ts';
import { firstStandingFactor, type FactorRecord, type PasskeyCredential } from '../store/records.ts';
import type { FactorRepository, PasskeyChallengeStore } from '../store/types.ts';
import { CHALLENGE_TTL_SECONDS, challengeKey, descriptor, parseResponse, type Binding, type StoredChallenge } from './passkey-challenges.ts';

export type { Binding } from './passkey-challenges.ts';

export interface RelyingParty {
  /** The domain passkeys are bound to. */
  id: string;
  /** What the authenticator shows the user. */
  name: string;
  /** The one origin ceremonies may come from: IDP_BASE_URL's. */
  origin: string;
}

export interface PasskeyDeps {
  relyingParty: RelyingParty;
  challenges: PasskeyChallengeStore;
  factors: Pick<FactorRepository, 'add' | 'findPasskey' | 'recordPasskeyUse' | 'listForUser'>;
  clock: Clock;
}

/** The user a passkey is registered for, with the passkeys they have (not to be registered twice). */
export interface PasskeyUser {
  id: string;
  username: string;
  displayName: string;
  passkeys: readonly FactorRecord[];
}

export type AuthenticationResult =
  | { ok: true; factor: FactorRecord }
  /** `counter_regressed`: the stored and presented counters, for the audit line. */
  | { ok: false; reason: 'counter_regressed'; factor: FactorRecord; stored: number; presented: number }
  | { ok: false; reason: 'no_challenge' | 'unknown_passkey' | 'not_verified' };

/** `first`: the passkey is the user's first second factor (the recovery codes are made with it). */
/** What a person is told when the authenticator offers a passkey that is registered already (to whom is not said). */
export const REGISTERED_ALREADY = 'This passkey is registered already. Use another authenticator, or another passkey of this one.';

/** `registered_already`: the credential id is stored already (a user's, this one's or another's): it names one passkey of one user. */
export type RegistrationResult = { ok: true; factor: FactorRecord; first: boolean } | { ok: false; reason: 'no_challenge' | 'not_verified' | 'registered_already' };

/** A new credential verified, to be stored; or why not. */
export type VerifiedRegistration = { ok: true; passkey: PasskeyCredential } | { ok: false; reason: 'no_challenge' | 'not_verified' };

/**
 * Stores a verified passkey as the user's, named `name`, on `factors` (the store's, or a
 * transaction's); `first` when it is the user's first second factor.
 */
export async function storePasskey(factors: Pick<FactorRepository, 'findPasskey' | 'add' | 'listForUser'>, userId: string, passkey: PasskeyCredential, name: string): Promise<RegistrationResult> {
  // A sign-in finds the passkey by its credential id: a second row with it would sign in the
  // wrong user. Refused here; the store refuses a concurrent one too (no row, no error).
  if (await factors.findPasskey(passkey.credentialId)) return { ok: false, reason: 'registered_already' };
  const factor = await factors.add({ userId, kind: 'passkey', name, secretSealed: null, passkey });
  if (!factor) return { ok: false, reason: 'registered_already' };
  return { ok: true, factor, first: firstStandingFactor(await factors.listForUser(userId))?.id === factor.id };
}

export function createPasskeys(deps: PasskeyDeps) {
  const rp = deps.relyingParty;

  async function takeChallenge(binding: Binding, purpose: StoredChallenge['purpose'], userId: string): Promise<string | undefined> {
    const stored = await deps.challenges.take<StoredChallenge>(challengeKey(binding, purpose));
    return stored?.purpose === purpose && stored.userId === userId ? stored.challenge : undefined;
  }

  /** Verifies a new credential against the binding's challenge (taken either way); stores nothing (storePasskey does). */
  async function verifyRegistration(binding: Binding, userId: string, responseText: string): Promise<VerifiedRegistration> {
    const challenge = await takeChallenge(binding, 'register', userId);
    if (!challenge) return { ok: false, reason: 'no_challenge' };
    const response = parseResponse<RegistrationResponseJSON>(responseText);
    if (!response) return { ok: false, reason: 'not_verified' };
    let info;
    try {
      const verified = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: true });
      info = verified.verified ? verified.registrationInfo : undefined;
    } catch {
      info = undefined;
    }
    if (!info) return { ok: false, reason: 'not_verified' };
    const passkey: PasskeyCredential = {
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      signCount: info.credential.counter,
      transports: (info.credential.transports ?? []).map(String),
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
    };
    return { ok: true, passkey };
  }

  return {
    /** Whether browsers can use passkeys here at all: a relying party id is a domain name, never an IP address. */
    offered: isIP(rp.id) === 0,

    /** Options for `navigator.credentials.create()`: a discoverable credential preferred, its user verified. */
    async registrationOptions(binding: Binding, user: PasskeyUser): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const options = await generateRegistrationOptions({
        rpName: rp.name, rpID: rp.id, userName: user.username, userDisplayName: user.displayName,
        userID: new TextEncoder().encode(user.id),
        attestationType: 'none',
        excludeCredentials: user.passkeys.filter((f) => f.passkey).map(descriptor),
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
        timeout: CHALLENGE_TTL_SECONDS * 1000,
      });
      const stored: StoredChallenge = { purpose: 'register', userId: user.id, challenge: options.challenge };
      await deps.challenges.issue(challengeKey(binding, 'register'), stored, CHALLENGE_TTL_SECONDS);
      return options;
    },

    /** Verifies a new credential against the binding's challenge (taken either way) and stores it as `name`. */
    async register(binding: Binding, userId: string, responseText: string, name: string): Promise<RegistrationResult> {
      const verified = await verifyRegistration(binding, userId, responseText);
      return verified.ok ? storePasskey(deps.factors, userId, verified.passkey, name) : verified;
    },

    verifyRegistration,

    /** Options for `navigator.credentials.get()`: one of the user's passkeys, the user verified. */
    async authenticationOptions(binding: Binding, userId: string, passkeys: readonly FactorRecord[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const options = await generateAuthenticationOptions({
        rpID: rp.id, userVerification: 'required', timeout: CHALLENGE_TTL_SECONDS * 1000,
        allowCredentials: passkeys.filter((f) => f.passkey).map(descriptor),
      });
      const stored: StoredChallenge = { purpose: 'authenticate', userId, challenge: options.challenge };
      await deps.challenges.issue(challengeKey(binding, 'authenticate'), stored, CHALLENGE_TTL_SECONDS);
      return options;
    },

    /**
     * Verifies an assertion of the user's against the binding's challenge (taken either way).
     * The passkey is read now, not from a cached user: its counter must be the last one seen.
     */
    async authenticate(binding: Binding, userId: string, responseText: string): Promise<AuthenticationResult> {
      const challenge = await takeChallenge(binding, 'authenticate', userId);
      if (!challenge) return { ok: false, reason: 'no_challenge' };
      const response = parseResponse<AuthenticationResponseJSON>(responseText);
      const factor = typeof response?.id === 'string' && response.id.length <= 1024 ? await deps.factors.findPasskey(response.id) : undefined;
      if (!response || !factor?.passkey || factor.userId !== userId) return { ok: false, reason: 'unknown_passkey' };
      const stored = factor.passkey.signCount;
      let info;
      try {
        // The counter is judged below, so that a regression is told apart from a bad signature.
        const credential = { id: factor.passkey.credentialId, publicKey: Buffer.from(factor.passkey.publicKey, 'base64url'), counter: 0 };
        const verified = await verifyAuthenticationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, credential, requireUserVerification: true });
        info = verified.verified ? verified.authenticationInfo : undefined;
      } catch {
        info = undefined;
      }
      if (!info) return { ok: false, reason: 'not_verified' };
      const presented = info.newCounter;
      const regressed = { ok: false, reason: 'counter_regressed', factor, stored, presented } as const;
      if ((stored > 0 || presented > 0) && presented <= stored) return regressed;
      const use = { signCount: presented, backedUp: info.credentialBackedUp, at: new Date(deps.clock()) };
      // Another sign-in with this counter may have got there first: then this one is the replay.
      if (!(await deps.factors.recordPasskeyUse(factor.id, use))) return regressed;
      return { ok: true, factor };
    },
  };
}

export type Passkeys = ReturnType<typeof createPasskeys>;
