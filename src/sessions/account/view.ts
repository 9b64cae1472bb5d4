/**
 * What the account page shows of the signed-in user, as plain values for its template: the
 * profile (the claims the service holds, labelled in words), what can be changed here and the
 * second factors, with times as people read them. No HTTP, no markup.
 */
import { listPasskeys } from '../../factors/passkey-management.ts';
import { RECOVERY_CODE_COUNT, recoveryCodesLeft } from '../../factors/recovery-codes.ts';
import { hasSecondFactor, totpFactor, type UserRecord } from '../../store/records.ts';
import type { SignedIn } from './signed-in.ts';
import { canChangePassword } from './security.ts';
import { readableTime, type ReadableTime } from './readable-time.ts';

export interface ProfileRow {
  label: string;
  /** The OpenID Connect claim that carries it (the row's id on the page, never shown). */
  claim: string;
  value: string;
}

export interface AccountView {
  username: string;
  profile: ProfileRow[];
  /** The name's parts, as the profile form shows them; undefined when the profile is not kept here. */
  names: { givenName: string; familyName: string } | undefined;
  email: string | null;
  emailVerified: boolean;
  canChangePassword: boolean;
  /**
   * Whether sign-in here asks this account's second factors: not for an upstream provider's
   * accounts, whose sign-in (and second factor) happens there.
   */
  factorsHere: boolean;
  /** Signed in recently enough to change the password or second factors without signing in again. */
  recent: boolean;
  /** The authenticator app, when set up. */
  totp: { since: ReadableTime; lastUsed: ReadableTime | null } | undefined;
  /** Recovery codes: offered with a second factor; how many are left unused. */
  recoveryCodes: { offered: boolean; left: number; total: number };
  /** The user's passkeys, oldest first. */
  passkeys: Array<{ id: string; name: string; since: ReadableTime; lastUsed: ReadableTime | null }>;
}

const yesNo = (value: boolean) => (value ? 'Yes' : 'No');

function profileRows(user: UserRecord): ProfileRow[] {
  const rows: Array<[string, string, string | null]> = [
    ['Username', 'preferred_username', user.username],
    ['Name', 'name', user.name],
    ['Given name', 'given_name', user.givenName],
    ['Family name', 'family_name', user.familyName],
    ['Email', 'email', user.email],
    ['Email verified', 'email_verified', user.email ? yesNo(user.emailVerified) : null],
    ['Phone number', 'phone_number', user.phoneNumber],
    ['Phone number verified', 'phone_number_verified', user.phoneNumber ? yesNo(user.phoneNumberVerified) : null],
    ['Roles', 'role', user.roles.length > 0 ? user.roles.join(', ') : null],
  ];
  return rows.filter((row): row is [string, string, string] => row[2] !== null && row[2] !== '')
    .map(([label, claim, value]) => ({ label, claim, value }));
}

/** `now`: seconds since the epoch, that times are read at. */
export function accountView(signedIn: SignedIn, recent: boolean, now: number): AccountView {
  const { user } = signedIn;
  const totp = totpFactor(user);
  const shownTime = (at: Date | number) => readableTime(at, now);
  return {
    username: user.username,
    profile: profileRows(user),
    names: user.source === 'local' ? { givenName: user.givenName ?? '', familyName: user.familyName ?? '' } : undefined,
    email: user.email,
    emailVerified: user.emailVerified,
    canChangePassword: canChangePassword(signedIn),
    factorsHere: user.source !== 'oidc',
    recent,
    totp: totp && { since: shownTime(totp.createdAt), lastUsed: totp.lastUsedAt && shownTime(totp.lastUsedAt) },
    recoveryCodes: { offered: hasSecondFactor(user), left: recoveryCodesLeft(user), total: RECOVERY_CODE_COUNT },
    passkeys: listPasskeys(user).map((p) => ({ id: p.id, name: p.name, since: shownTime(p.createdAt), lastUsed: p.lastUsedAt && shownTime(p.lastUsedAt) })),
  };
}
