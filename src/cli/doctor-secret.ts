/**
 * `idp doctor`'s check of the master secret: does IDP_SECRET open what the database holds, and
 * does anything still need IDP_SECRET_PREVIOUS (until `idp secrets reseal` has run).
 */
import { createSigningKeyManager } from '../composition/services.ts';
import { staleUserSecrets } from '../factors/authenticator-app.ts';
import { deriveKeyring } from '../tokens/secret-box.ts';
import { readSecretCheck, WRONG_SECRET, WRONG_SECRET_FIX } from '../tokens/secret-check.ts';
import { fail, isOutcome, ok, openOrSkip, skip, type DoctorContext, type Outcome } from './doctor-context.ts';


export async function checkSecret(context: DoctorContext): Promise<Outcome> {
  if (!context.secrets) return skip('no master secret to check');
  const durable = await openOrSkip(context);
  if (isOutcome(durable)) return durable;
  const secrets = context.secrets();
  const state = await readSecretCheck(durable, secrets);
  if (state === 'wrong') return fail(WRONG_SECRET, WRONG_SECRET_FIX);
  let keys: number;
  let totp: number;
  try {
    keys = await createSigningKeyManager(durable, secrets, context.clock).sealedUnderPrevious();
    totp = staleUserSecrets(await durable.users.list(), deriveKeyring(secrets, 'totp-secrets')).length;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error), WRONG_SECRET_FIX);
  }
  const stale = keys + totp + (state === 'previous' ? 1 : 0);
  if (stale > 0) {
    return ok(`IDP_SECRET_PREVIOUS is still needed: ${keys} signing key(s), ${totp} TOTP secret(s)${state === 'previous' ? ' and the check value' : ''} are sealed under a previous secret; run idp secrets reseal to seal them under IDP_SECRET`);
  }
  if (secrets.previous.length > 0) {
    return ok('IDP_SECRET opens everything in the database: IDP_SECRET_PREVIOUS is no longer needed there '
      + '(refresh tokens not used since the change still need it until IDP_REFRESH_TOKEN_IDLE_LIFETIME has passed)');
  }
  return ok(state === 'absent' ? 'nothing sealed yet (the first start seals the check value under IDP_SECRET)' : 'IDP_SECRET opens everything in the database');
}
