/** A user's form fields <-> the API's wire fields (OpenID Connect claims, as PATCH /users/{id} takes them). */
import type { UserPatch } from '../../admin/user-update.ts';
import type { NewLocalUser } from '../../admin/users.ts';
import type { UserWire } from '../../admin/wire-schemas.ts';
import { checked, linesOf, textOf, type FormBody } from './forms.ts';

const TEXTS = ['given_name', 'family_name', 'name', 'email', 'phone_number'] as const;

/** What a user's profile form shows. */
export function userFormValues(user: UserWire): Record<string, unknown> {
  return {
    username: user.username,
    ...Object.fromEntries(TEXTS.map((name) => [name, user[name] ?? ''])),
    email_verified: user.email_verified,
    phone_number_verified: user.phone_number_verified,
    roles: user.roles.join('\n'),
  };
}

/** What was typed, to show again beside its refusals. */
export function typedUserValues(form: FormBody): Record<string, unknown> {
  return {
    username: textOf(form, 'username') ?? '',
    ...Object.fromEntries(TEXTS.map((name) => [name, textOf(form, name) ?? ''])),
    email_verified: checked(form, 'email_verified'),
    phone_number_verified: checked(form, 'phone_number_verified'),
    roles: linesOf(form, 'roles').join('\n'),
  };
}

/** An empty text field clears its claim (null), as a merge patch's null does. */
const orNull = (form: FormBody, name: string) => {
  const value = textOf(form, name)?.trim();
  return value ? value : null;
};

/** The profile form as a merge patch of every field it shows (a username only for a local account). */
export function userPatchOf(form: FormBody, local: boolean): UserPatch {
  const username = textOf(form, 'username')?.trim();
  return {
    ...(local && username ? { username } : {}),
    ...Object.fromEntries(TEXTS.map((name) => [name, orNull(form, name)])),
    email_verified: checked(form, 'email_verified'),
    phone_number_verified: checked(form, 'phone_number_verified'),
    roles: linesOf(form, 'roles'),
  };
}

/** "Create user" as the API's POST /users takes it. */
export function newUserOf(form: FormBody): NewLocalUser {
  return {
    username: textOf(form, 'username')?.trim() ?? '',
    password: textOf(form, 'password') ?? '',
    givenName: orNull(form, 'given_name'),
    familyName: orNull(form, 'family_name'),
    email: orNull(form, 'email'),
    emailVerified: checked(form, 'email_verified'),
    phoneNumber: orNull(form, 'phone_number'),
    phoneNumberVerified: checked(form, 'phone_number_verified'),
    roles: linesOf(form, 'roles'),
  };
}

/** The fields "Create user" was given, as the API names them in its change. */
export function newUserFields(form: FormBody): string[] {
  return ['username', 'password', ...TEXTS.filter((name) => name !== 'name' && orNull(form, name) !== null), 'email_verified', 'phone_number_verified', 'roles'];
}
