/**
 * For the "Forgot password" suites: two `idp serve` instances on one PostgreSQL database and a
 * Redis of their own behind a load balancer (operations-support.ts), the mail they write to
 * their log (the log mailer: a line with `"mail": true`), and the pages of a recovery driven as
 * a browser without JavaScript drives them.
 */
import { expect } from 'vitest';
import { readForm, type Browser, type Page } from '../helpers/relying-party.ts';
import { linksIn } from '../helpers/smtp.ts';
import { waitUntil } from '../helpers/waits.ts';

export { codeIn } from '../helpers/smtp.ts';
import type { RunningServer } from '../helpers/process.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Every mail the servers wrote to their logs so far, oldest first per server. */
export function mailsIn(servers: readonly RunningServer[]): Mail[] {
  return servers.flatMap((server) => server.output().split('\n').flatMap((line) => {
    if (!line.includes('"mail":true')) return [];
    const parsed = JSON.parse(line) as Mail & { time: number };
    return [{ to: parsed.to, subject: parsed.subject, text: parsed.text, time: parsed.time }];
  })).sort((a, b) => a.time - b.time).map(({ to, subject, text }) => ({ to, subject, text }));
}

/** Waits for the `count`-th mail to `to` (1-based) whose subject holds `about` (other notices come and go), and returns it. */
export async function nthMailTo(servers: readonly RunningServer[], to: string, count: number, about = 'password reset code'): Promise<Mail> {
  const mails = await waitUntil(`mail number ${count} to ${to} about ${about}`, () => {
    const found = mailsIn(servers).filter((m) => m.to === to && m.subject.includes(about));
    return found.length >= count ? found : undefined;
  }, { processes: servers.map((s) => s.child) });
  return mails[count - 1] as Mail;
}

/** The link that opens the code form with the code filled in. */
export function linkIn(mail: Pick<Mail, 'text'>): string {
  const link = linksIn(mail).find((l) => /\/account\/recover\/code\?/.test(l));
  expect(link, mail.text).toBeTruthy();
  return link ?? '';
}

/** The sign-in page's "Forgot password?" link, absolute. */
export function forgotLink(page: Page): string | undefined {
  const href = /<a href="([^"]*)">Forgot password\?<\/a>/.exec(page.body)?.[1];
  return href === undefined ? undefined : new URL(href.replace(/&amp;/g, '&'), page.url).href;
}

/** From the sign-in page: "Forgot password?", then `identifier` typed and "Send code"; the answer. */
export async function askForCode(browser: Browser, signInPage: Page, identifier: string): Promise<Page> {
  const link = forgotLink(signInPage);
  expect(link, 'the sign-in page links "Forgot password?"').toBeTruthy();
  const form = await browser.get(link ?? '');
  expect(form.status, form.body.slice(0, 500)).toBe(200);
  expect(form.body).toContain('Username or email');
  expect(form.body).toContain('Send code');
  const { action, fields } = readForm(form.body, form.url);
  return browser.post(action, { ...fields, identifier });
}

/** Whether a page is the code form (the answer to every request). */
export function isCodeForm(page: Page): boolean {
  return page.status === 200 && /<form[^>]*action="[^"]*\/account\/recover\/code"/.test(page.body) && page.body.includes('>Continue</button>');
}

/** Types `code` into the code form of `page` and presses "Continue". */
export function enterCode(browser: Browser, page: Page, code: string, headers: Record<string, string> = {}): Promise<Page> {
  const { action, fields } = readForm(page.body, page.url);
  return browser.request(action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ ...fields, code }).toString(),
  });
}

/** The text of a page's alert, if it has one. */
export function alertOf(page: Page): string | undefined {
  return /<div class="alert"[^>]*>[\s\S]*?<p>([^<]*)<\/p>/.exec(page.body)?.[1];
}

/** The page with what differs between any two answers taken out: tokens, ids and the nonce. */
export function withoutTokens(body: string): string {
  return body.replace(/value="[A-Za-z0-9_-]{40,}"/g, 'value="…"');
}
