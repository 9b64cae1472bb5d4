/**
 * The account page's working parts (sessions/account*.ts), made once from the opened services
 * (services.ts). No I/O here; app.ts hands them to routes/account.ts.
 */
import type { MailBrand } from './mail/messages.ts';
import type { ServicesBase } from './services-base.ts';
import { createAccountBase, type AccountBase } from './sessions/account.ts';
import { createAccountSecurity, type AccountSecurity } from './sessions/account-security.ts';
import { createEmailVerification, type EmailVerification } from './sessions/email-verification.ts';

export interface AccountServices {
  account: {
    base: AccountBase;
    security: AccountSecurity;
    email: EmailVerification;
  };
}

/** What mail is signed with: IDP_BRAND_NAME, else the host of the base URL. */
export function mailBrand(config: ServicesBase['config']): MailBrand {
  return { name: config.brand.name ?? new URL(config.baseUrl).host, color: config.brand.color };
}

export function createAccountServices(services: ServicesBase): AccountServices {
  const { config, clock, durable, users, sessions, ephemeral, mailer } = services;
  const brand = mailBrand(config);
  // The page reads the user from the database: a second factor removed a moment ago is gone.
  const base = createAccountBase({ clock, sessions, users: durable.users, csrfKey: services.csrfKey, mailer, brand });
  const security = createAccountSecurity({
    base,
    ephemeral,
    mfa: services.mfa,
    factors: durable.factors,
    sessions,
    changePassword: services.changePassword,
    // Until browser sessions are listable per user, nothing more to end.
    endOtherSessions: async () => undefined,
  });
  const email = createEmailVerification({
    ephemeral, users, mailer, brand, now: base.now,
    linkFor: (code) => `${config.baseUrl}/account?email_code=${code}#verify-email`,
  });
  return { account: { base, security, email } };
}
