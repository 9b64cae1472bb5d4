/**
 * How a user is shown: wire names (as OpenID Connect claims spell them) for JSON, fields and
 * table rows for text. Password hashes, TOTP secrets and recovery codes are never shown: which second
 * factors a user has, how many recovery codes are left, when each was made and last used.
 */
import { summariseFactors, type FactorSummary } from '../admin/second-factors.ts';
import { hasSecondFactor, type UserRecord } from '../store/records.ts';
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
    ['mfa_enrolled', yesNo(hasSecondFactor(user))],
    ...factorFields(summariseFactors(user)),
  ]);
}

/** `second_factors: none`, or one line per factor: what it is, when it was made and last used. */
function factorFields(factors: FactorSummary[]): [string, string][] {
  if (factors.length === 0) return [['second_factors', 'none']];
  return factors.map((f, i) => {
    const what = f.kind === 'recovery_code' ? `recovery codes: ${f.remaining ?? 0} left` : `${f.kind} (${f.name})`;
    return [i === 0 ? 'second_factors' : '', `${what}, created ${f.created_at}, last used ${f.last_used_at ?? 'never'}`];
  });
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
    yesNo(hasSecondFactor(user)),
  ];
}
