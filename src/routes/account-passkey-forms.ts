/**
 * The account page's passkey forms: "Add a passkey" (its name, and what the browser's
 * authenticator answered, filled in by the page's script), "Rename" and "Remove". Each is a
 * security change (routes/account-forms.ts checks the CSRF token and the recent sign-in first);
 * a refusal shows the page again with what went wrong in "Second factors".
 */
import type { FastifyReply } from 'fastify';
import type { SignedIn } from '../sessions/account/signed-in.ts';
import type { AccountPasskeys } from '../sessions/account/passkeys.ts';
import type { BrowserRequest } from '../sessions/sign-in/flow-types.ts';
import type { ConfirmedAction } from './account-messages.ts';
import type { Params } from './shared/params.ts';

type Handler = (signedIn: SignedIn, form: Params, browser: BrowserRequest, reply: FastifyReply) => Promise<FastifyReply>;

export interface PasskeyFormParts {
  passkeys: AccountPasskeys;
  /** Registers a form; `confirm`: the change needs a recent sign-in, asked again for that action. */
  form(path: string, confirm: ConfirmedAction | null, handler: Handler): void;
  done(reply: FastifyReply, notice: string): FastifyReply;
  refused(reply: FastifyReply, signedIn: SignedIn, refusal: { error: string; invalid: string[] }): Promise<FastifyReply>;
  showCodes(reply: FastifyReply, signedIn: SignedIn, codes: readonly string[], notice: string): FastifyReply;
}

export function passkeyFormRoutes({ passkeys, form, done, refused, showCodes }: PasskeyFormParts): void {
  form('/passkeys', 'passkeys', async (signedIn, fields, browser, reply) => {
    const result = await passkeys.add(signedIn, fields, browser.audit);
    if (!('codes' in result)) return refused(reply, signedIn, result);
    return result.codes ? showCodes(reply, signedIn, result.codes, 'passkey-added') : done(reply, 'passkey-added');
  });

  form('/passkeys/rename', 'passkey-rename', async (signedIn, fields, _browser, reply) => {
    const refusal = await passkeys.rename(signedIn, fields);
    return refusal ? refused(reply, signedIn, refusal) : done(reply, 'passkey-renamed');
  });

  form('/passkeys/remove', 'passkey-remove', async (signedIn, fields, browser, reply) => {
    const refusal = await passkeys.remove(signedIn, fields, browser.audit);
    return refusal ? refused(reply, signedIn, refusal) : done(reply, 'passkey-removed');
  });
}
