/**
 * The account page's working parts (sessions/account*.ts), made once from the opened services
 * (services.ts). No I/O here; app.ts hands them to routes/account.ts.
 */
import { updateOwnProfile, type UserPatch, type UserUpdated } from '../admin/user-update.ts';
import type { Audit } from '../events/record.ts';
import type { ServicesBase } from './base.ts';
import type { UserSessionServices } from './protocol.ts';
import { createAccountBase, type AccountBase } from '../sessions/account/signed-in.ts';
import { createAccountPasskeys, type AccountPasskeys } from '../sessions/account/passkeys.ts';
import { createAccountSecurity, type AccountSecurity } from '../sessions/account/security.ts';
import { createPasswordChanged } from '../sessions/password-changed.ts';
import { createEmailVerification, type EmailVerification } from '../sessions/account/email-verification.ts';
import type { UserRecord } from '../store/records.ts';

export interface AccountServices {
  account: {
    base: AccountBase;
    security: AccountSecurity;
    passkeys: AccountPasskeys;
    email: EmailVerification;
    /** The user's applications and browser sessions (admin/applications.ts, admin/sessions.ts). */
    userSessions: UserSessionServices;
    /** Changes the user's own profile fields, by the administration's one rule (admin/user-update.ts), with its event. */
    updateProfile(user: UserRecord, patch: Pick<UserPatch, 'given_name' | 'family_name'>, audit: Audit): Promise<UserUpdated>;
  };
}

export function createAccountServices(services: ServicesBase, userSessions: UserSessionServices): AccountServices {
  const { config, clock, durable, users, sessions, ephemeral, mailer, mailBrand: brand } = services;
  // The page reads the user from the database: a second factor removed a moment ago is gone.
  const base = createAccountBase({ clock, sessions, users: durable.users, csrfKey: services.csrfKey });
  const security = createAccountSecurity({
    base,
    ephemeral,
    mfa: services.mfa,
    change: services.accountChange,
    recoveryCodes: services.recoveryCodes,
    notices: services.notices,
    changePassword: services.changePassword,
    passwordChanged: createPasswordChanged({ notices: services.notices, endOtherSessions: userSessions.endOtherBrowserSessionsAfterPasswordChange }),
  });
  const passkeys = createAccountPasskeys({ passkeys: services.passkeys, factors: durable.factors, change: services.accountChange, recoveryCodes: services.recoveryCodes, notices: services.notices });
  const email = createEmailVerification({
    ephemeral, users, mailer, brand, now: base.now,
    linkFor: (code) => `${config.baseUrl}/account?email_code=${code}#verify-email`,
  });
  const updateProfile = (user: UserRecord, patch: Pick<UserPatch, 'given_name' | 'family_name'>, audit: Audit) =>
    updateOwnProfile({ change: services.accountChange, secret: services.secret, clock }, user, patch, audit);
  return { account: { base, security, passkeys, email, userSessions, updateProfile } };
}
