/**
 * The account page's passkeys, without HTTP: the options of "Add a passkey" (a challenge bound
 * to this browser session), adding the passkey the browser made, renaming and removing one. The
 * route checks the CSRF token and the recent sign-in first; each addition or removal is audited
 * and mailed. Removing the user's last authenticator app or passkey is refused.
 */
import type { Audit } from '../../events/record.ts';
import type { AccountChange } from '../../factors/account-change.ts';
import { defaultPasskeyName, passkeyName, removePasskey, renamePasskey } from '../../factors/passkey-management.ts';
import { REGISTERED_ALREADY, storePasskey, type Binding, type Passkeys, type RegistrationResult } from '../../factors/passkeys.ts';
import { generateRecoveryCodes, type RecoveryCodeDeps } from '../../factors/recovery-codes.ts';
import type { SecurityNotices } from '../../mail/security-notices.ts';
import { passkeyFactors } from '../../store/records.ts';
import type { FactorRepository } from '../../store/types.ts';
import type { SignedIn } from './signed-in.ts';
import { LAST_FACTOR_REFUSAL, type Refusal, type TotpAdded } from './security.ts';

export interface AccountPasskeysDeps {
  passkeys: Passkeys;
  factors: Pick<FactorRepository, 'rename'>;
  /** Each addition or removal with its events, in one transaction. */
  change: AccountChange;
  recoveryCodes: RecoveryCodeDeps;
  notices: SecurityNotices;
}

/** The account page's ceremony belongs to the browser session that shows the page. */
const bindingOf = ({ loaded }: SignedIn): Binding => ({ sessionKey: loaded.key, ceremony: 'account' });

/** A passkey stored, with the recovery codes made with it (the user's first second factor); or why not. */
type PasskeyAdded = RegistrationResult & { codes?: string[] | undefined };

const OIDC_REFUSAL: Refusal = { error: 'Your sign-in provider asks for your second factors.', invalid: [] };

export function createAccountPasskeys(deps: AccountPasskeysDeps) {
  const { passkeys } = deps;

  /** The options of "Add a passkey"; undefined when passkeys cannot be used here or for this user. */
  async function addOptions(signedIn: SignedIn): Promise<string | undefined> {
    const { user } = signedIn;
    if (!passkeys.offered || user.source === 'oidc') return undefined;
    const options = await passkeys.registrationOptions(bindingOf(signedIn), { id: user.id, username: user.username, displayName: user.name ?? user.username, passkeys: passkeyFactors(user) });
    return JSON.stringify(options);
  }

  /** Keeps the passkey the browser made, under the name typed; the first second factor comes with new recovery codes. */
  async function add(signedIn: SignedIn, form: Record<string, string>, audit: Audit): Promise<Refusal | TotpAdded> {
    const { user } = signedIn;
    if (user.source === 'oidc') return OIDC_REFUSAL;
    if (!passkeys.offered) return { error: 'Passkeys cannot be added at this address.', invalid: [] };
    const typed = form.passkey_name ?? '';
    const name = typed.trim() === '' ? defaultPasskeyName(user) : passkeyName(typed);
    if (!name) return { error: 'Give the passkey a name of at most 100 characters.', invalid: ['passkey_name'] };
    const verified = await passkeys.verifyRegistration(bindingOf(signedIn), user.id, form.passkey_response ?? '');
    const result = !verified.ok ? verified : await deps.change<PasskeyAdded>(user.id, audit, async (tx) => {
      const stored = await storePasskey(tx.factors, user.id, verified.passkey, name);
      if (!stored.ok) return { result: stored, events: [] };
      const added = { type: 'mfa_added' as const, user_id: user.id, kind: 'passkey' as const };
      // The user's first second factor comes with a new set of recovery codes.
      if (!stored.first) return { result: { ...stored, codes: undefined }, events: [added] };
      const codes = await generateRecoveryCodes({ ...deps.recoveryCodes, factors: tx.factors }, user.id);
      return { result: { ...stored, codes }, events: [added, { type: 'recovery_codes_generated' as const, user_id: user.id, count: codes.length }] };
    });
    if (!result.ok) return { error: result.reason === 'registered_already' ? REGISTERED_ALREADY : 'The passkey was not added. Try again.', invalid: [] };
    const { codes } = result;
    if (codes === undefined) {
      deps.notices.mail(user, 'mfa_added', `A passkey "${name}" was set up.`);
      return { codes: undefined };
    }
    deps.notices.mail(user, 'mfa_added', `A passkey "${name}" was set up, with ${codes.length} new recovery codes.`);
    return { codes };
  }

  async function rename(signedIn: SignedIn, form: Record<string, string>): Promise<Refusal | undefined> {
    const result = await renamePasskey(deps, signedIn.user, form.passkey_id ?? '', form.name ?? '');
    if (result === 'ok') return undefined;
    if (result === 'invalid_name') return { error: 'Give the passkey a name of at most 100 characters.', invalid: ['name'] };
    return { error: 'That passkey is not one of yours (any more).', invalid: [] };
  }

  async function remove(signedIn: SignedIn, form: Record<string, string>, audit: Audit): Promise<Refusal | undefined> {
    const result = await removePasskey({ change: deps.change, notices: deps.notices, audit }, signedIn.user, form.passkey_id ?? '');
    if (result === 'ok') return undefined;
    if (result === 'last_second_factor') return LAST_FACTOR_REFUSAL;
    return { error: 'That passkey is not one of yours (any more).', invalid: [] };
  }

  return { addOptions, add, rename, remove };
}

export type AccountPasskeys = ReturnType<typeof createAccountPasskeys>;
