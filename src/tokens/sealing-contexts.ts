/**
 * What each sealed value is bound to (AES-GCM associated data, see secret-box.ts): a sealed
 * value copied onto another row does not open there. Written once here, for the code that seals
 * and the code that opens again (reseal, seed, the secret check).
 */

/** A user's stored TOTP secret, bound to the user's id. */
export const totpSealingContext = (userId: string): string => `totp:${userId}`;

/** A signing key's private JWK, bound to its key id. */
export const signingKeySealingContext = (kid: string): string => `signing-key:${kid}`;
