/** Signing keys; creation and rotation run under a transaction-scoped advisory lock. */
import { sql, type Selectable } from 'kysely';
import type { SigningKeyRecord, SigningKeyState } from '../records.ts';
import type { SigningKeyRepository, SigningKeyTransaction } from '../types.ts';
import { sqlOutbox, type AuditsType } from './outbox.ts';
import type { Db, SigningKeysTable } from './tables.ts';

// Any fixed 64-bit number: the lock that serialises key creation and rotation cluster-wide.
const SIGNING_KEY_LOCK = 7_312_001;

function toRecord(row: Selectable<SigningKeysTable>): SigningKeyRecord {
  return {
    kid: row.kid,
    alg: 'RS256',
    state: row.state as SigningKeyState,
    publicJwk: typeof row.public_jwk === 'string' ? (JSON.parse(row.public_jwk) as Record<string, unknown>) : row.public_jwk,
    privateJwkSealed: row.private_jwk_sealed,
    createdAt: row.created_at,
    activatedAt: row.activated_at,
    retiredAt: row.retired_at,
  };
}

function keyTransaction(db: Db, audits: AuditsType): SigningKeyTransaction {
  return {
    outbox: sqlOutbox(db, audits),
    async list() {
      const rows = await db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
      return rows.map(toRecord);
    },
    async insert(key) {
      await db.insertInto('signing_keys').values({
        kid: key.kid,
        alg: key.alg,
        state: key.state,
        public_jwk: JSON.stringify(key.publicJwk),
        private_jwk_sealed: key.privateJwkSealed,
        created_at: key.createdAt,
        activated_at: key.activatedAt,
        retired_at: key.retiredAt,
      }).execute();
    },
    async setState(kid, state, at) {
      await db.updateTable('signing_keys').set({
        state,
        ...(state === 'current' ? { activated_at: at } : {}),
        ...(state === 'retired' ? { retired_at: at } : {}),
      }).where('kid', '=', kid).execute();
    },
    async reseal(kid, privateJwkSealed) {
      await db.updateTable('signing_keys').set({ private_jwk_sealed: privateJwkSealed }).where('kid', '=', kid).execute();
    },
  };
}

export function sqlSigningKeys(db: Db, audits: AuditsType): SigningKeyRepository {
  return {
    list: () => keyTransaction(db, audits).list(),
    withLock: (fn) =>
      db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(${SIGNING_KEY_LOCK})`.execute(trx);
        return fn(keyTransaction(trx, audits));
      }),
  };
}
