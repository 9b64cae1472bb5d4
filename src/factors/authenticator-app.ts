/**
 * TOTP secrets at rest and in enrolment: sealed with the key derived from IDP_SECRET for
 * 'totp-secrets', bound to the user (stored) or to the interaction (while enrolling). The QR
 * code is rendered here, on the server, as SVG: no external service ever sees a secret.
 */
import QRCode from 'qrcode';
import { totpFactor, type UserRecord } from '../store/records.ts';
import type { EphemeralStore, FactorRepository } from '../store/types.ts';
import { asKeyring, openWithKeyring, seal, type Keyring } from '../tokens/secret-box.ts';
import { totpSealingContext } from '../tokens/sealing-contexts.ts';
import { newTotpSecret, totpUri } from './totp.ts';
import { entryPerRow, type FactorKindSpec } from './factor-kind.ts';

/** The authenticator app (TOTP): one at most, listed by the name it was set up with. */
export const authenticatorAppKind: FactorKindSpec = { kind: 'totp', label: 'Authenticator app', entries: entryPerRow };

export interface MfaSecrets {
  ephemeral: EphemeralStore;
  openUserSecret(userId: string, sealed: string): string;
  /** The otpauth:// URI of an enrolment: what the QR code holds, as a link for the phone that shows the page. */
  otpauthUri(account: string, secret: string): string;
  /** A new secret for an enrolment, sealed to the interaction. */
  startEnrolment(interactionId: string): { secret: string; sealed: string };
  openEnrolSecret(interactionId: string, sealed: string): string;
  /**
   * Stores the confirmed secret as the user's authenticator app; false when another enrolment
   * stored the user's app first (this secret is not kept). An administrator's requirement
   * (`must_enrol_mfa`) stays: it is the account's, and now met. On `factors` when given (a
   * transaction's, which records the change's events too).
   */
  enrol(userId: string, secret: string, factors?: Pick<FactorRepository, 'add'>): Promise<boolean>;
  /** Records that a factor was just used to sign in. */
  used(factorId: string, at: Date): Promise<void>;
  /** The QR code of the otpauth:// URI, as SVG markup made here (safe to embed). */
  qrSvg(account: string, secret: string): Promise<string>;
}

/** MFA enrolment: the new secret, and its otpauth:// URI as a link and as a QR code (SVG made here). */
export interface Enrolment {
  secret: string;
  qrSvg: string;
  otpauthUri: string;
  /** The account and the issuer, as the authenticator app will list them. */
  account: string;
  issuer: string;
}

const userContext = totpSealingContext;

/** Sealing uses the current key; opening any key of the ring (IDP_SECRET_PREVIOUS too). */
export interface MfaDeps {
  key: Buffer | Keyring;
  ephemeral: EphemeralStore;
  factors: Pick<FactorRepository, 'add' | 'touch'>;
  issuerName: string;
}

/** The name an enrolled authenticator app gets. */
export const TOTP_FACTOR_NAME = 'Authenticator app';

export function createMfaSecrets(deps: MfaDeps): MfaSecrets {
  const ring = asKeyring(deps.key);
  return {
    ephemeral: deps.ephemeral,
    openUserSecret: (userId, sealed) => openWithKeyring(ring, sealed, userContext(userId)).text,
    otpauthUri: (account, secret) => totpUri(deps.issuerName, account, secret),
    startEnrolment(interactionId) {
      const secret = newTotpSecret();
      return { secret, sealed: seal(ring.current, secret, `enrol:${interactionId}`) };
    },
    openEnrolSecret: (interactionId, sealed) => openWithKeyring(ring, sealed, `enrol:${interactionId}`).text,
    async enrol(userId, secret, factors = deps.factors) {
      // Of two enrolments at once (two tabs), the first stored is the one kept (one app per user).
      const stored = await factors.add({ userId, kind: 'totp', name: TOTP_FACTOR_NAME, secretSealed: seal(ring.current, secret, userContext(userId)) });
      return stored !== undefined;
    },
    used: (factorId, at) => deps.factors.touch(factorId, at),
    qrSvg: (account, secret) => QRCode.toString(totpUri(deps.issuerName, account, secret), { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
  };
}

/** What an enrolment page shows for `secret`: the QR code, the otpauth:// URI, and the names the app lists. */
export async function enrolmentOf(mfa: MfaSecrets, account: string, secret: string): Promise<Enrolment> {
  const otpauthUri = mfa.otpauthUri(account, secret);
  const issuer = new URL(otpauthUri).searchParams.get('issuer') ?? '';
  return { secret, qrSvg: await mfa.qrSvg(account, secret), otpauthUri, account, issuer };
}

/**
 * The users whose TOTP secret only a previous master secret opens, with the secret sealed anew
 * under the current one (`idp secrets reseal` writes them). Throws, naming the user, when a
 * secret opens under none of the keys.
 */
export function staleUserSecrets(users: readonly UserRecord[], ring: Keyring): Array<{ factorId: string; secretSealed: string }> {
  const stale: Array<{ factorId: string; secretSealed: string }> = [];
  for (const user of users) {
    const factor = totpFactor(user);
    if (!factor?.secretSealed) continue;
    let opened: { text: string; current: boolean };
    try {
      opened = openWithKeyring(ring, factor.secretSealed, userContext(user.id));
    } catch (error) {
      throw new Error(`the TOTP secret of user ${user.username} opens under none of the secrets`, { cause: error });
    }
    if (!opened.current) stale.push({ factorId: factor.id, secretSealed: seal(ring.current, opened.text, userContext(user.id)) });
  }
  return stale;
}
