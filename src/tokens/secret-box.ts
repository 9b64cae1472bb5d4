/**
 * Sealing of secrets at rest (signing keys, TOTP secrets) with AES-256-GCM under keys derived
 * from IDP_SECRET by HKDF-SHA-256, one key per purpose, so one leaked derived key opens nothing else.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What a derived key is for; part of the HKDF info, so changing one changes the key. */
export type KeyPurpose = 'signing-keys' | 'totp-secrets' | 'cookies' | 'refresh-tokens' | 'secret-check' | 'device-cookies' | 'recovery-codes' | 'webhook-secrets' | 'admin-idempotency';

const VERSION = 'v1';
/**
 * GCM's full 128-bit tag. Node otherwise accepts any tag from 4 bytes up (NIST SP 800-38D §5.2.1.2),
 * so whoever may edit a sealed value could cut the tag short and forge with far fewer guesses.
 */
const TAG_LENGTH = 16;

/** Derives a 32-byte key for one purpose from the master secret. */
export function deriveKey(masterSecret: Buffer, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', masterSecret, 'idp', `idp ${purpose} ${VERSION}`, 32));
}

/** Seals a text: `v1.<iv>.<ciphertext>.<tag>`, base64url. `context` is bound as associated data. */
export function seal(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_LENGTH });
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

/** Opens a sealed text; throws when the key, the context or the text is wrong. */
export function open(key: Buffer, sealed: string, context: string): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== VERSION || !iv || body === undefined || !tag) throw new Error('sealed value is malformed');
  const tagBytes = Buffer.from(tag, 'base64url');
  if (tagBytes.length !== TAG_LENGTH) throw new Error('sealed value is malformed');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_LENGTH });
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(tagBytes);
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * The master secrets in force: IDP_SECRET seals everything new; the older ones
 * (IDP_SECRET_PREVIOUS) still open what they sealed, so the secret can change without downtime.
 */
export interface MasterSecrets {
  current: Buffer;
  previous: readonly Buffer[];
}

/** The keys of one purpose derived from each master secret, current first. */
export interface Keyring {
  current: Buffer;
  previous: readonly Buffer[];
}

/** Derives the keys of one purpose once, at start: the hot paths never run HKDF. */
export function deriveKeyring(secrets: MasterSecrets, purpose: KeyPurpose): Keyring {
  return { current: deriveKey(secrets.current, purpose), previous: secrets.previous.map((s) => deriveKey(s, purpose)) };
}

/** A single key is a keyring without previous keys (tests, and callers that never rotate). */
export function asKeyring(key: Buffer | Keyring): Keyring {
  return Buffer.isBuffer(key) ? { current: key, previous: [] } : key;
}

/** Every key of a keyring, current first: what a MAC is checked against. */
export function keysOf(ring: Keyring): Buffer[] {
  return [ring.current, ...ring.previous];
}

/**
 * Opens a sealed text with the current key, else with each previous one in turn (AES-GCM
 * authenticates, so a wrong key fails rather than yielding garbage). `current` tells whether
 * it was sealed under the current key: false means `idp secrets reseal` still has work.
 */
export function openWithKeyring(ring: Keyring, sealed: string, context: string): { text: string; current: boolean } {
  try {
    return { text: open(ring.current, sealed, context), current: true };
  } catch (error) {
    for (const key of ring.previous) {
      try {
        return { text: open(key, sealed, context), current: false };
      } catch {
        // the next one
      }
    }
    throw error;
  }
}
