/**
 * How a user is shown: wire names (as OpenID Connect claims spell them) for JSON, fields and
 * table rows for text. Password hashes and TOTP secrets are never shown, only whether MFA is set up.
 */
import { totpFactor, type UserRecord } from '../store/records.ts';
export { userDocument } from '../admin/documents.ts';
import { formatFields, listText, yesNo } from './output.ts';

function withVerified(value: string | null, verified: boolean): string {
  return value === null ? '-' : `${value} (${verified ? 'verified' : 'not verified'})`;
}

export function userFieldLines(user: UserRecord): string[] {
  return formatFields([
    ['id', user.id],
    ['sub', user.subject],
    ['source', user.source],
    ['username', user.username],
    ['given_name', user.givenName ?? '-'],
    ['family_name', user.familyName ?? '-'],
    ['name', user.name ?? '-'],
    ['email', withVerified(user.email, user.emailVerified)],
    ['phone_number', withVerified(user.phoneNumber, user.phoneNumberVerified)],
    ['roles', listText(user.roles)],
    ['locked', yesNo(user.locked)],
    ['must_change_password', yesNo(user.mustChangePassword)],
    ['must_enrol_mfa', yesNo(user.mustEnrolMfa)],
    ['mfa_enrolled', yesNo(totpFactor(user) !== undefined)],
  ]);
}

export const USER_TABLE_HEADERS = ['USERNAME', 'SOURCE', 'SUB', 'EMAIL', 'ROLES', 'LOCKED', 'MFA'];

export function userRow(user: UserRecord): string[] {
  return [
    user.username,
    user.source,
    user.subject,
    user.email ?? '-',
    listText(user.roles),
    yesNo(user.locked),
    yesNo(totpFactor(user) !== undefined),
  ];
}
