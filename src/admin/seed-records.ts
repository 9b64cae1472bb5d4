/**
 * The rows a seed file's new entries become (an entry for a record that exists is a patch:
 * src/admin/client-update.ts and user-update.ts). A TOTP secret is sealed here for both.
 */
import { hashPassword } from '../sources/passwords.ts';
import type { ClientRecord, UserInput } from '../store/records.ts';
import { hashClientSecret, randomToken } from '../tokens/opaque.ts';
import { totpSealingContext } from '../tokens/sealing-contexts.ts';
import { open, seal } from '../tokens/secret-box.ts';
import { canonicalUsername, parseInstant } from './rules.ts';
import type { SeedClient, SeedUser } from './input-schemas.ts';
import { NEW_USER_DEFAULTS } from './user-fields.ts';

/** A new client from a seed file's entry: what the entry leaves out takes the defaults of a new client. */
export function seedClientRecord(client: SeedClient): ClientRecord {
  const secret = client.client_secret ?? null;
  return {
    clientId: client.client_id,
    displayName: client.display_name ?? '',
    enabled: client.enabled ?? true,
    secretHash: secret === null ? null : hashClientSecret(secret),
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
export function seedTotpSecret(totpKey: Buffer, userId: string, totp: string | null | undefined, stored: string | null | undefined): SeedTotp {
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

/** A new user from a seed file's entry and their TOTP factor (argon2 runs here, never inside the transaction). */
export interface SeedUserInput {
  user: UserInput;
  totp: SeedTotp;
}

/**
 * A new user from a seed file's entry, its password hashed (a `password_hash` is stored as
 * given) and its TOTP secret sealed. `subject` keeps the `sub` another provider gave the user.
 */
export async function seedUserInput(user: SeedUser, totpKey: Buffer, subject?: string): Promise<SeedUserInput> {
  const id = randomToken(16);
  const input: UserInput = {
    ...NEW_USER_DEFAULTS,
    id,
    source: 'local',
    subject: subject ?? id,
    username: canonicalUsername(user.username),
    passwordHash: user.password_hash ?? (await hashPassword(user.password ?? '')),
    givenName: user.given_name ?? null,
    familyName: user.family_name ?? null,
    name: user.name ?? null,
    email: user.email ?? null,
    emailVerified: user.email_verified ?? false,
    phoneNumber: user.phone_number ?? null,
    phoneNumberVerified: user.phone_number_verified ?? false,
    roles: [...new Set(user.roles ?? [])],
    locked: user.locked ?? false,
    mustChangePassword: user.must_change_password ?? false,
    mustEnrolMfa: user.must_enrol_mfa ?? false,
  };
  // A new user has nothing stored: an omitted secret leaves them without the factor.
  return { user: input, totp: seedTotpSecret(totpKey, id, user.totp_secret ?? null, null) };
}
