/**
 * `idp doctor`'s mail check: the mail server of IDP_SMTP_URL greets, upgrades to TLS and takes the
 * sign-in, as the service would. Whether the service has a mail server is what it says it runs
 * with (src/cli/doctor-service.ts), when it says; trying it from here needs IDP_SMTP_URL's password.
 */
import { describeSmtp } from '../config/mail.ts';
import { verifyMailServer } from '../mail/smtp.ts';
import { fail, ok, skip, warn, type DoctorContext, type Outcome } from './doctor-context.ts';
import { notTheService, serviceFactsOf } from './doctor-service.ts';

export async function checkMail(context: DoctorContext): Promise<Outcome> {
  const { smtp } = context.config.mail;
  const facts = await serviceFactsOf(context);
  const service = facts?.mail.server;
  if (facts ? !facts.mail.configured : !smtp) {
    const whose = facts ? 'the service has no mail server (IDP_SMTP_URL unset there)' : 'IDP_SMTP_URL is unset';
    if (!(facts ? facts.mode === 'production' : context.config.production)) return skip(`${whose}: messages go to the log`);
    return warn(`${whose}: password recovery by mail, email verification and mail notices are not offered`, 'set IDP_SMTP_URL to the mail server (smtp://user:password@host:587)');
  }
  if (!smtp) return skip(`the service sends mail through ${service ?? 'a mail server'}; not tried from here: IDP_SMTP_URL (with its password) is unset in this environment`);
  const where = describeSmtp(smtp);
  if (service && service !== where) return notTheService('mail server', where, service, 'IDP_SMTP_URL');
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
