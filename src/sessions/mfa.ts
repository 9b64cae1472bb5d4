/**
 * TOTP secrets at rest and in enrolment: sealed with the key derived from IDP_SECRET for
 * 'totp-secrets', bound to the user (stored) or to the interaction (while enrolling). The QR
 * code is rendered here, on the server, as SVG: no external service ever sees a secret.
 */
import QRCode from 'qrcode';
import type { EphemeralStore, UserRepository } from '../store/types.ts';
import { open, seal } from '../tokens/secret-box.ts';
import { newTotpSecret, totpUri } from './totp.ts';

export interface MfaSecrets {
  ephemeral: EphemeralStore;
  openUserSecret(userId: string, sealed: string): string;
  /** A new secret for an enrolment, sealed to the interaction. */
  startEnrolment(interactionId: string): { secret: string; sealed: string };
  openEnrolSecret(interactionId: string, sealed: string): string;
  /** Stores the confirmed secret for the user and clears the enrolment flag. */
  enrol(userId: string, secret: string): Promise<void>;
  /** The QR code of the otpauth:// URI, as SVG markup made here (safe to embed). */
  qrSvg(account: string, secret: string): Promise<string>;
}

export function createMfaSecrets(deps: { key: Buffer; ephemeral: EphemeralStore; users: Pick<UserRepository, 'update'>; issuerName: string }): MfaSecrets {
  const { key } = deps;
  return {
    ephemeral: deps.ephemeral,
    openUserSecret: (userId, sealed) => open(key, sealed, `totp:${userId}`),
    startEnrolment(interactionId) {
      const secret = newTotpSecret();
      return { secret, sealed: seal(key, secret, `enrol:${interactionId}`) };
    },
    openEnrolSecret: (interactionId, sealed) => open(key, sealed, `enrol:${interactionId}`),
    async enrol(userId, secret) {
      await deps.users.update(userId, { totpSecretSealed: seal(key, secret, `totp:${userId}`), mustEnrolMfa: false });
    },
    qrSvg: (account, secret) => QRCode.toString(totpUri(deps.issuerName, account, secret), { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
  };
}
