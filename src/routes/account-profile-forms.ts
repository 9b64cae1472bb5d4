/**
 * The account page's profile form (a local account's given and family name; `name` follows them
 * by the administration's one rule, admin/full-name.ts) and "Sign out" of one browser session
 * (ended with its tokens, by the function the administration API's DELETE uses).
 */
import type { FastifyReply } from 'fastify';
import { AdminError } from '../admin/errors.ts';
import { recorderOf } from '../events/in-transaction.ts';
import type { SignedIn } from '../sessions/account/signed-in.ts';
import type { BrowserRequest } from '../sessions/sign-in/flow-types.ts';
import type { AccountServices } from '../composition/account.ts';
import type { AccountSection, ConfirmedAction } from './account-messages.ts';
import type { Params } from './shared/params.ts';

type Handler = (signedIn: SignedIn, form: Params, browser: BrowserRequest, reply: FastifyReply) => Promise<FastifyReply>;

export interface ProfileFormParts {
  account: AccountServices['account'];
  form(path: string, confirm: ConfirmedAction | null, handler: Handler): void;
  done(reply: FastifyReply, notice: string): FastifyReply;
  refuse(reply: FastifyReply, signedIn: SignedIn, section: AccountSection, refusal: { error: string; invalid: string[] }): Promise<FastifyReply>;
}

/** A name part as long as a person's name may be here. */
const NAME_MAX = 100;
const NAME_FIELDS = ['given_name', 'family_name'] as const;

/** Whether the user's profile is kept here (a directory's or a provider's is theirs, written again at each sign-in). */
export const canEditProfile = ({ user }: SignedIn) => user.source === 'local';

/** The typed name part: trimmed, empty as none; undefined when too long. */
function namePart(typed: string | undefined): string | null | undefined {
  const value = (typed ?? '').trim();
  if (value.length > NAME_MAX) return undefined;
  return value === '' ? null : value;
}

export function profileFormRoutes({ account, form, done, refuse }: ProfileFormParts): void {
  form('/profile', null, async (signedIn, fields, browser, reply) => {
    if (!canEditProfile(signedIn)) return refuse(reply, signedIn, 'profile', { error: 'Your name is kept by your organisation\'s directory or sign-in provider.', invalid: [] });
    const [given, family] = NAME_FIELDS.map((field) => namePart(fields[field]));
    const tooLong = NAME_FIELDS.filter((_, i) => [given, family][i] === undefined);
    if (given === undefined || family === undefined) return refuse(reply, signedIn, 'profile', { error: `A name may be at most ${NAME_MAX} characters long.`, invalid: tooLong });
    try {
      await account.updateProfile(signedIn.user, { given_name: given, family_name: family }, browser.audit);
    } catch (error) {
      if (!(error instanceof AdminError) || error.code !== 'invalid') throw error;
      const invalid = error.problems.map((problem) => String(problem.path[0]));
      return refuse(reply, signedIn, 'profile', { error: 'A name may not hold control characters.', invalid });
    }
    return done(reply, 'profile-updated');
  });

  form('/sessions/end', null, async (signedIn, fields, browser, reply) => {
    const recording = { recorder: recorderOf(browser.audit), eventsOf: () => [{ type: 'sessions_ended' as const, user_id: signedIn.user.id, browser_sessions: 1 }] };
    await account.userSessions.endUserSession(signedIn.user.id, fields.session_id ?? '', recording).catch((error: unknown) => {
      // Ended meanwhile (it expired, or another tab signed it out): what was asked is so, and nothing is recorded.
      if (!(error instanceof AdminError && error.code === 'not_found')) throw error;
    });
    return done(reply, 'session-ended');
  });
}
