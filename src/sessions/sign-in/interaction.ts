/**
 * An interaction is one authorization request being worked through its sign-in steps. It is
 * bound to the browser session that started it and carries the CSRF token of its forms.
 */
import type { Clock } from '../../clock.ts';
import { epochSeconds } from '../../clock.ts';
import type { EphemeralStore, EphemeralWrite, EphemeralWritesByOutcome } from '../../store/types.ts';
import { NAMESPACES } from '../../store/types.ts';
import { sameBytes } from '../../tokens/constant-time.ts';
import { hashToken, randomToken } from '../../tokens/opaque.ts';
import type { AuthorizationRequest } from './authorization-request.ts';

/** A user who gave the right password but has steps left before the browser session is theirs. */
export interface PendingSignIn {
  userId: string;
  /**
   * The account name the throttle counts failures against: the source's one name for what was
   * typed at the sign-in page (`canonicalAccountName`), or the upstream username.
   */
  username: string;
  amr: string[];
  /** The secret shown during MFA enrolment, sealed, until the first code confirms it. */
  enrolSecretSealed: string | null;
  upstreamIdToken?: string | undefined;
  /**
   * A password recovery (password-recovery.ts), not a sign-in: the right code stood in for the
   * password; the second factor, then a new password, are owed, and the browser is then signed
   * in (`pwd`, with `mfa` when a second factor was given) and goes on with the request.
   */
  recovery?: true;
}

export interface Interaction {
  id: string;
  request: AuthorizationRequest;
  /** Key of the browser session this interaction belongs to. */
  sessionKey: string;
  csrfToken: string;
  /** When the user signed in within this interaction (so prompt=login is satisfied once). */
  signedInAt: number | null;
  pending: PendingSignIn | null;
  consentGiven: boolean;
  createdAt: number;
  /**
   * Seconds from `createdAt` the interaction lives: UNSTARTED_INTERACTION_TTL_SECONDS for an
   * anonymous visitor until the sign-in page is posted, then INTERACTION_TTL_SECONDS (also when
   * absent: interactions stored before this field existed).
   */
  lifetime?: number;
  /** The account page's own sign-in (account-sign-in.ts): where the browser goes back to at the end. */
  returnTo?: string;
  /** The account page asking the signed-in user to confirm it is them before a change. */
  confirm?: AccountConfirmation;
}

/** A sign-in that confirms who is signed in: the account is fixed (not typed), and the page says why. */
export interface AccountConfirmation {
  username: string;
  /** What the change is about, for the page's words. */
  purpose: 'password' | 'factors' | 'account';
}

/** How long a user has to get through the sign-in pages. */
export const INTERACTION_TTL_SECONDS = 30 * 60;
/**
 * How long an anonymous visitor's interaction lives until its sign-in page is posted: long
 * enough to type a password, short enough that unauthenticated authorization requests cannot
 * pile up state in the store (each one would otherwise be kept for the full half hour).
 */
export const UNSTARTED_INTERACTION_TTL_SECONDS = 10 * 60;

export interface InteractionStore {
  /**
   * A new interaction with the write that stores it (for the caller to send, batched); short-lived
   * when `anonymous` (the browser has no signed-in session).
   */
  create(request: AuthorizationRequest, sessionKey: string, anonymous: boolean, returnTo?: string, confirm?: AccountConfirmation): { interaction: Interaction; write: EphemeralWrite };
  load(id: string): Promise<Interaction | undefined>;
  saveWrite(interaction: Interaction): EphemeralWrite;
  save(interaction: Interaction): Promise<void>;
  /** Ends an interaction without a code (a refusal): nothing can be issued from it any more. */
  finish(id: string): Promise<void>;
  /**
   * Ends an interaction with the writes of the outcome in the same step: `deleted` for the one
   * caller that ended it (true), `missing` otherwise.
   */
  finishWith(id: string, writes: EphemeralWritesByOutcome): Promise<boolean>;
}

export function createInteractionStore(ephemeral: EphemeralStore, clock: Clock): InteractionStore {
  const remaining = (interaction: Interaction) =>
    Math.max(1, interaction.createdAt + (interaction.lifetime ?? INTERACTION_TTL_SECONDS) - epochSeconds(clock));
  const saveWrite = (interaction: Interaction): EphemeralWrite =>
    ({ op: 'set', ns: NAMESPACES.interaction, key: hashToken(interaction.id), value: interaction, ttlSeconds: remaining(interaction) });
  return {
    create(request, sessionKey, anonymous, returnTo, confirm) {
      const interaction: Interaction = {
        id: randomToken(),
        request,
        sessionKey,
        csrfToken: randomToken(),
        signedInAt: null,
        pending: null,
        consentGiven: false,
        createdAt: epochSeconds(clock),
        lifetime: anonymous ? UNSTARTED_INTERACTION_TTL_SECONDS : INTERACTION_TTL_SECONDS,
        ...(returnTo === undefined ? {} : { returnTo }),
        ...(confirm === undefined ? {} : { confirm }),
      };
      return { interaction, write: saveWrite(interaction) };
    },
    load: (id) => (id.length > 100 ? Promise.resolve(undefined) : ephemeral.get<Interaction>(NAMESPACES.interaction, hashToken(id))),
    saveWrite,
    save: (interaction) => ephemeral.write([saveWrite(interaction)]),
    finish: (id) => ephemeral.delete(NAMESPACES.interaction, hashToken(id)),
    finishWith: (id, writes) => ephemeral.deleteAndWrite(NAMESPACES.interaction, hashToken(id), writes),
  };
}

/** The interaction with its full lifetime: someone is working through its pages (a posted form). */
export function withFullLifetime(interaction: Interaction): Interaction {
  return interaction.lifetime === INTERACTION_TTL_SECONDS ? interaction : { ...interaction, lifetime: INTERACTION_TTL_SECONDS };
}

/** A form post belongs to the interaction when it comes from its browser session with its token. */
export function isSameBrowser(interaction: Interaction, sessionKey: string | undefined, csrfToken: string | undefined): boolean {
  if (!sessionKey || sessionKey !== interaction.sessionKey || !csrfToken) return false;
  return sameBytes(interaction.csrfToken, csrfToken);
}
