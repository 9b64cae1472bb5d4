/**
 * What the account page says after an action, and where: each message belongs to the section of
 * the action it answers, is shown next to it and takes the focus (templates/partials/account-message.eta).
 * The query names a message by a fixed key (`?done=`, `?confirmed=`), so no text of a request
 * ever reaches the page as such.
 */
import type { AccountConfirmation } from '../sessions/sign-in/interaction.ts';

/** The page's sections that an action's message can sit in. */
export type AccountSection = 'profile' | 'email' | 'password' | 'totp' | 'codes' | 'passkeys' | 'applications' | 'sessions';

export interface AccountMessage {
  section: AccountSection;
  kind: 'notice' | 'error';
  text: string;
  /** Fields in error, by their `name`. */
  invalid: string[];
}

/** The notices a change ends on (`?done=`), with the section each belongs to. */
const NOTICES: Record<string, [AccountSection, string]> = {
  password: ['password', 'Your password was changed. Your applications and other browsers were signed out.'],
  'totp-added': ['totp', 'The authenticator app is set up. Sign-ins now ask for its code.'],
  'codes-generated': ['codes', 'Your new recovery codes are in force; the old ones no longer work.'],
  'totp-removed': ['totp', 'The authenticator app was removed.'],
  'email-sent': ['email', 'We sent a code to your email address. Enter it below.'],
  'email-verified': ['profile', 'Your email address is verified.'],
  'profile-updated': ['profile', 'Your name was saved.'],
  'access-removed': ['applications', 'The application no longer has access to your account. If you use it again, it asks for your permission again.'],
  'sessions-ended': ['sessions', 'Your other browser sessions were signed out.'],
  'session-ended': ['sessions', 'That session was signed out.'],
  'passkey-added': ['passkeys', 'The passkey is added. Sign-ins can now use it as your second factor.'],
  'passkey-renamed': ['passkeys', 'The passkey was renamed.'],
  'passkey-removed': ['passkeys', 'The passkey was removed.'],
};

/**
 * The changes that need a recent sign-in, by the key `/account/sign-in-again?for=` names: what
 * the sign-in page says it is for, and, once confirmed, the section the page returns to and
 * what it says there.
 */
export const CONFIRMED_ACTIONS = {
  password: { purpose: 'password', section: 'password', then: 'change your password' },
  totp: { purpose: 'factors', section: 'totp', then: 'set up the authenticator app' },
  'totp-remove': { purpose: 'factors', section: 'totp', then: 'remove the authenticator app' },
  'recovery-codes': { purpose: 'factors', section: 'codes', then: 'generate new recovery codes' },
  passkeys: { purpose: 'factors', section: 'passkeys', then: 'add a passkey' },
  'passkey-rename': { purpose: 'factors', section: 'passkeys', then: 'rename the passkey' },
  'passkey-remove': { purpose: 'factors', section: 'passkeys', then: 'remove the passkey' },
} as const satisfies Record<string, { purpose: AccountConfirmation['purpose']; section: AccountSection; then: string }>;

export type ConfirmedAction = keyof typeof CONFIRMED_ACTIONS;

export const isConfirmedAction = (value: unknown): value is ConfirmedAction => typeof value === 'string' && Object.hasOwn(CONFIRMED_ACTIONS, value);

const notice = (section: AccountSection, text: string): AccountMessage => ({ section, kind: 'notice', text, invalid: [] });

/** The notice `?done=` names, when it is one of ours (only such a key is carried through a sign-in). */
export const doneOf = (query: Record<string, unknown>): string | undefined =>
  typeof query.done === 'string' && Object.hasOwn(NOTICES, query.done) ? query.done : undefined;

/** The message a query asks for (`done` or `confirmed`), when it names one. */
export function messageOf(query: Record<string, unknown>): AccountMessage | undefined {
  const key = doneOf(query);
  const done = key === undefined ? undefined : NOTICES[key];
  if (done) return notice(...done);
  if (!isConfirmedAction(query.confirmed)) return undefined;
  const action = CONFIRMED_ACTIONS[query.confirmed];
  return notice(action.section, `Thank you, it's you. You can now ${action.then}.`);
}

/** The destructive actions that ask first, on the page (`?confirm=`, with the `id` of what they act on). */
const ASKING = ['totp-remove', 'recovery-codes', 'passkey-remove', 'access-remove'] as const;

export interface Confirming {
  action: (typeof ASKING)[number];
  id: string | undefined;
}

/** The confirmation a query asks the page to show in place of an action's button, when it names one. */
export function confirmingOf(query: Record<string, unknown>): Confirming | undefined {
  const action = ASKING.find((name) => name === query.confirm);
  if (!action) return undefined;
  return { action, id: typeof query.id === 'string' && query.id.length <= 200 ? query.id : undefined };
}
