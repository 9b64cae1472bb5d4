/** `idp doctor`'s mail check: the mail server of IDP_SMTP_URL greets, upgrades to TLS and takes the sign-in, as the service would. */
import { describeSmtp } from '../config/mail.ts';
import { verifyMailServer } from '../mail/smtp.ts';
import { fail, ok, skip, warn, type DoctorContext, type Outcome } from './doctor-context.ts';

export async function checkMail(context: DoctorContext): Promise<Outcome> {
  const { smtp } = context.config.mail;
  if (!smtp) {
    if (!context.config.production) return skip('IDP_SMTP_URL is unset: messages go to the log');
    return warn('IDP_SMTP_URL is unset: password recovery by mail, email verification and mail notices are not offered', 'set IDP_SMTP_URL to the mail server (smtp://user:password@host:587)');
  }
  const where = describeSmtp(smtp);
  const signIn = smtp.user !== undefined ? `, signed in as ${smtp.user}` : '';
  try {
    await verifyMailServer(smtp);
    return ok(`${where} answers${signIn}`);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const fix = smtp.requireTls && /STARTTLS/i.test(reason)
      ? 'use a mail server that offers STARTTLS, or smtps://; IDP_ALLOW_INSECURE_MAIL=1 allows cleartext on a trusted network'
      : 'check IDP_SMTP_URL (host, port, user and password), and that the mail server accepts this machine';
    return fail(`${where} does not work: ${reason}`, fix);
  }
}
