/** The `user_factors` table <-> FactorRecord, and the factors read with a user. */
import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { FactorKind, FactorRecord, PasskeyCredential } from '../records.ts';
import type { FactorRepository } from '../types.ts';
import type { Database, Db, UserFactorsTable } from './tables.ts';

const FACTOR_COLUMNS = [
  'id', 'user_id', 'kind', 'name', 'secret_sealed', 'created_at', 'last_used_at',
  'credential_id', 'public_key', 'sign_count', 'transports', 'backup_eligible', 'backed_up', 'aaguid',
] as const satisfies ReadonlyArray<keyof UserFactorsTable>;
/** The same, qualified: `users` has an `id` and a `name` too. */
const QUALIFIED = FACTOR_COLUMNS.map((column) => `user_factors.${column}` as const);

/** A row, from the table or from JSON (where timestamps are strings). */
type FactorRow = Omit<Selectable<UserFactorsTable>, 'created_at' | 'last_used_at' | 'secret_hash'> & { created_at: Date | string; last_used_at: Date | string | null };

export function toFactorRecord(row: FactorRow): FactorRecord {
  const record: FactorRecord = {
    id: row.id,
    userId: row.user_id,
    kind: row.kind as FactorKind,
    name: row.name,
    secretSealed: row.secret_sealed,
    createdAt: new Date(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
  };
  if (row.kind !== 'passkey' || row.credential_id === null || row.public_key === null) return record;
  return {
    ...record,
    passkey: {
      credentialId: row.credential_id,
      publicKey: row.public_key,
      signCount: Number(row.sign_count ?? 0),
      transports: row.transports,
      backupEligible: row.backup_eligible,
      backedUp: row.backed_up,
      aaguid: row.aaguid ?? '',
    },
  };
}

/** A passkey's columns (none for other kinds). */
function passkeyColumns(passkey: PasskeyCredential | undefined) {
  if (!passkey) return {};
  return {
    credential_id: passkey.credentialId,
    public_key: passkey.publicKey,
    sign_count: passkey.signCount,
    transports: passkey.transports,
    backup_eligible: passkey.backupEligible,
    backed_up: passkey.backedUp,
    aaguid: passkey.aaguid,
  };
}

/**
 * The user's factors as one JSON column of the user's own query: the sign-in learns which
 * factors a user has without another round trip.
 */
export function factorsOfUser(eb: ExpressionBuilder<Database, 'users'>) {
  return jsonArrayFrom(
    eb.selectFrom('user_factors').select(QUALIFIED).whereRef('user_factors.user_id', '=', 'users.id')
      .orderBy('user_factors.created_at').orderBy('user_factors.id'),
  ).as('factors');
}

/** Runs `fn` in a transaction: the handle's own when it is one already (a change recorded with its event), else a new one. */
function transactionOf<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

export function sqlFactors(db: Db): FactorRepository {
  return {
    async listForUser(userId) {
      const rows = await db.selectFrom('user_factors').select(FACTOR_COLUMNS).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
      return rows.map(toFactorRecord);
    },
    async add(factor) {
      // The one-per-user kinds (user_factors_one_totp) refuse a second row, and a credential id
      // stored already (user_factors_credential_id) another: no error, no row.
      const row = await db.insertInto('user_factors')
        .values({ user_id: factor.userId, kind: factor.kind, name: factor.name, secret_sealed: factor.secretSealed, ...passkeyColumns(factor.passkey) })
        .onConflict((oc) => oc.doNothing())
        .returning(FACTOR_COLUMNS)
        .executeTakeFirst();
      return row && toFactorRecord(row);
    },
    async remove(id) {
      const result = await db.deleteFrom('user_factors').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async touch(id, at) {
      await db.updateTable('user_factors').set({ last_used_at: at }).where('id', '=', id).execute();
    },
    async findPasskey(credentialId) {
      const row = await db.selectFrom('user_factors').select(FACTOR_COLUMNS)
        .where('credential_id', '=', credentialId).where('kind', '=', 'passkey').executeTakeFirst();
      return row && toFactorRecord(row);
    },
    async recordPasskeyUse(id, use) {
      // The counter must move forward (or stay 0 on an authenticator that keeps none) in this
      // one statement: of two sign-ins with one assertion, or with a cloned key, one wins.
      const result = await db.updateTable('user_factors')
        .set({ sign_count: use.signCount, backed_up: use.backedUp, last_used_at: use.at })
        .where('id', '=', id).where('kind', '=', 'passkey')
        .where('sign_count', use.signCount === 0 ? '=' : '<', use.signCount)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    removeUnlessLast: (userId, id, standing) => transactionOf(db, async (trx) => {
      // The user's row, locked: two removals at once are decided one after the other.
      await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
      const factors = await trx.selectFrom('user_factors').select(['id', 'kind']).where('user_id', '=', userId).execute();
      if (!factors.some((f) => f.id === id)) return 'not_found';
      if (!factors.some((f) => f.id !== id && standing.includes(f.kind as FactorKind))) return 'last';
      await trx.deleteFrom('user_factors').where('id', '=', id).execute();
      return 'removed';
    }),
    async rename(id, name) {
      const result = await db.updateTable('user_factors').set({ name }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    async reseal(id, secretSealed) {
      await db.updateTable('user_factors').set({ secret_sealed: secretSealed }).where('id', '=', id).execute();
    },
    async replaceRecoveryCodes(userId, hashes, name) {
      // One statement, so atomic without a transaction of its own (the store may be one already).
      const { rows } = await sql<FactorRow>`
        WITH old AS (DELETE FROM user_factors WHERE user_id = ${userId} AND kind = 'recovery_code')
        INSERT INTO user_factors (user_id, kind, name, secret_hash)
        SELECT ${userId}, 'recovery_code', ${name}, hash FROM unnest(${[...hashes]}::text[]) AS hash
        RETURNING ${sql.join(FACTOR_COLUMNS.map((column) => sql.ref(column)))}`.execute(db);
      return rows.map(toFactorRecord).sort((a, b) => a.id.localeCompare(b.id));
    },
    async consumeRecoveryCode(userId, candidates, at) {
      // The DELETE takes the row's lock: a second caller with the same code waits, then finds
      // the row gone and deletes nothing. The rest of the set is marked used in the same statement.
      const { rows } = await sql<{ used: string; total: string }>`
        WITH used AS (
          DELETE FROM user_factors
          WHERE user_id = ${userId} AND kind = 'recovery_code' AND secret_hash = ANY(${[...candidates]}::text[])
          RETURNING id
        ), touched AS (
          UPDATE user_factors SET last_used_at = ${at}
          WHERE user_id = ${userId} AND kind = 'recovery_code' AND EXISTS (SELECT 1 FROM used)
            AND id NOT IN (SELECT id FROM used)
          RETURNING id
        )
        SELECT (SELECT count(*) FROM used) AS used, (SELECT count(*) FROM touched) AS total`.execute(db);
      const row = rows[0];
      return !row || Number(row.used) === 0 ? undefined : { remaining: Number(row.total) };
    },
    async removeAllForUser(userId) {
      const rows = await db.deleteFrom('user_factors').where('user_id', '=', userId).returning(FACTOR_COLUMNS).execute();
      return rows.map(toFactorRecord);
    },
  };
}
