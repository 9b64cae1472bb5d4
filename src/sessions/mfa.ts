/**
 * TOTP secrets at rest and in enrolment: sealed with the key derived from IDP_SECRET for
 * 'totp-secrets', bound to the user (stored) or to the interaction (while enrolling). The QR
 * code is rendered here, on the server, as SVG: no external service ever sees a secret.
 */
import QRCode from 'qrcode';
import type { EphemeralStore, UserRecord, UserRepository } from '../store/types.ts';
import { asKeyring, openWithKeyring, seal, type Keyring } from '../tokens/secret-box.ts';
import { totpSealingContext } from '../tokens/sealing-contexts.ts';
import { newTotpSecret, totpUri } from './totp.ts';

export interface MfaSecrets {
  ephemeral: EphemeralStore;
  openUserSecret(userId: string, sealed: string): string;
  /** The otpauth:// URI of an enrolment: what the QR code holds, as a link for the phone that shows the page. */
  otpauthUri(account: string, secret: string): string;
  /** A new secret for an enrolment, sealed to the interaction. */
  startEnrolment(interactionId: string): { secret: string; sealed: string };
  openEnrolSecret(interactionId: string, sealed: string): string;
  /** Stores the confirmed secret for the user and clears the enrolment flag. */
  enrol(userId: string, secret: string): Promise<void>;
  /** The QR code of the otpauth:// URI, as SVG markup made here (safe to embed). */
  qrSvg(account: string, secret: string): Promise<string>;
}

const userContext = totpSealingContext;

/** Sealing uses the current key; opening any key of the ring (IDP_SECRET_PREVIOUS too). */
export function createMfaSecrets(deps: { key: Buffer | Keyring; ephemeral: EphemeralStore; users: Pick<UserRepository, 'update'>; issuerName: string }): MfaSecrets {
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
    async enrol(userId, secret) {
      await deps.users.update(userId, { totpSecretSealed: seal(ring.current, secret, userContext(userId)), mustEnrolMfa: false });
    },
    qrSvg: (account, secret) => QRCode.toString(totpUri(deps.issuerName, account, secret), { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
  };
}

/**
 * The users whose TOTP secret only a previous master secret opens, with the secret sealed anew
 * under the current one (`idp secrets reseal` writes them). Throws, naming the user, when a
 * secret opens under none of the keys.
 */
export function staleUserSecrets(users: readonly UserRecord[], ring: Keyring): Array<{ userId: string; totpSecretSealed: string }> {
  const stale: Array<{ userId: string; totpSecretSealed: string }> = [];
  for (const user of users) {
    if (!user.totpSecretSealed) continue;
    let opened: { text: string; current: boolean };
    try {
      opened = openWithKeyring(ring, user.totpSecretSealed, userContext(user.id));
    } catch (error) {
      throw new Error(`the TOTP secret of user ${user.username} opens under none of the secrets`, { cause: error });
    }
    if (!opened.current) stale.push({ userId: user.id, totpSecretSealed: seal(ring.current, opened.text, userContext(user.id)) });
  }
  return stale;
}
