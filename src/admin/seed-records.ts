/**
 * The rows a seed file's entries become. What already holds the file's values, including a
 * secret, password or TOTP secret that verifies against what is stored, is kept as stored, so
 * seeding twice changes nothing.
 */
import { hashPassword, verifyPassword } from '../sources/passwords.ts';
import { totpFactor, type ClientRecord, type DurableStore, type UserInput } from '../store/types.ts';
import { hashClientSecret, randomToken, verifyClientSecret } from '../tokens/opaque.ts';
import { totpSealingContext } from '../tokens/sealing-contexts.ts';
import { open, seal } from '../tokens/secret-box.ts';
import { canonicalUsername, parseInstant } from './rules.ts';
import type { SeedClient, SeedUser } from './seed-schema.ts';
import { NEW_USER_DEFAULTS } from './user-fields.ts';

/** The secret hash to store: the existing one when the file's secret still verifies against it. */
export function seedClientRecord(client: SeedClient, existing: ClientRecord | undefined): ClientRecord {
  const secret = client.client_secret ?? null;
  const keep = secret !== null && existing?.secretHash != null && verifyClientSecret(secret, existing.secretHash);
  return {
    clientId: client.client_id,
    displayName: client.display_name ?? '',
    enabled: client.enabled ?? true,
    secretHash: secret === null ? null : keep ? (existing?.secretHash ?? null) : hashClientSecret(secret),
    secretExpiresAt: client.secret_expires_at ? (parseInstant(client.secret_expires_at) ?? null) : null,
    grantTypes: [...new Set(client.grant_types ?? ['authorization_code'])] as ClientRecord['grantTypes'],
    scopes: client.scopes ?? [],
    redirectUris: client.redirect_uris ?? [],
    postLogoutRedirectUris: client.post_logout_redirect_uris ?? [],
    corsOrigins: client.cors_origins ?? [],
    accessTokenLifetime: client.access_token_lifetime ?? 3600,
    requireConsent: client.require_consent ?? false,
  };
}

/** What the seed does to a user's authenticator app: keep what is stored, remove it, or store this sealed secret. */
export type SeedTotp = 'keep' | null | string;

/**
 * The seed's decision on a user's TOTP factor: an omitted `totp_secret` keeps what is stored
 * (as other omitted fields will), `null` removes it; a secret the stored one opens to is kept,
 * any other is sealed anew. The only place the seed decides on TOTP.
 */
function seedTotpSecret(totpKey: Buffer, userId: string, totp: string | null | undefined, stored: string | null | undefined): SeedTotp {
  if (totp === undefined) return 'keep';
  if (totp === null) return null;
  const context = totpSealingContext(userId);
  if (stored != null) {
    try {
      if (open(totpKey, stored, context) === totp) return 'keep';
    } catch {
      // Sealed under another secret or for another id: seal the file's secret anew.
    }
  }
  return seal(totpKey, totp, context);
}

/** A user to write, whether the seed gives an existing user a new password, and their TOTP factor. */
export interface SeedUserInput {
  user: UserInput;
  passwordChanged: boolean;
  totp: SeedTotp;
}

/** Hashes and seals one user's secrets (argon2 runs here, never inside the transaction). */
export async function seedUserInput(user: SeedUser, durable: DurableStore, totpKey: Buffer): Promise<SeedUserInput> {
  const username = canonicalUsername(user.username);
  const existing = await durable.users.getByUsername('local', username);
  const id = existing?.id ?? randomToken(16);
  const keepPassword = existing?.passwordHash != null && (await verifyPassword(existing.passwordHash, user.password));
  const input: UserInput = {
    ...NEW_USER_DEFAULTS,
    id,
    source: 'local',
    subject: existing?.subject ?? id,
    username,
    passwordHash: keepPassword ? (existing?.passwordHash ?? null) : await hashPassword(user.password),
    givenName: user.given_name ?? null,
    familyName: user.family_name ?? null,
    name: user.name ?? null,
    email: user.email ?? null,
    emailVerified: user.email_verified ?? false,
    phoneNumber: user.phone_number ?? null,
    phoneNumberVerified: user.phone_number_verified ?? false,
    roles: user.roles ?? [],
    locked: user.locked ?? false,
    mustChangePassword: user.must_change_password ?? false,
    mustEnrolMfa: user.must_enrol_mfa ?? false,
  };
  const totp = seedTotpSecret(totpKey, id, user.totp_secret, existing && totpFactor(existing)?.secretSealed);
  return { user: input, passwordChanged: existing !== undefined && !keepPassword, totp };
}
