/**
 * Refresh token families, one row each, counting generations (migration
 * 2026-11-22-0003-refresh-generations). A rotation is one UPDATE of that row by its primary
 * key that only moves a live family still at the presented generation, so two racing
 * rotations serialise on the row on any instance and one of them wins. No column it sets is
 * indexed, so it stays a heap-only update. Lookups, rotations and new families made in the same
 * turn of the event loop go out together, one statement each (batch.ts).
 */
import { CompiledQuery, sql, type Selectable } from 'kysely';
import type { RefreshFamilyState } from '../records.ts';
import type { AdvanceInput, RefreshTokenRepository, RevokedFamilies } from '../types.ts';
import { batched, eachOnFailure } from './batch.ts';
import type { Db, RefreshTokenFamiliesTable } from './tables.ts';

/** Every column by name (not `*`): the lookup is then a prepared statement (see postgres.ts). */
const FAMILY_COLUMNS = [
  'id', 'client_id', 'user_id', 'scopes', 'claims', 'allowed_scopes', 'nonce', 'auth_time', 'amr', 'expires_at', 'created_at',
  'revoked_at', 'generation', 'token_salt', 'rotated_at', 'earlier_rotations', 'token_expires_at', 'access_expires_at',
] as const;

type FamilyRow = Pick<Selectable<RefreshTokenFamiliesTable>, (typeof FAMILY_COLUMNS)[number]>;

/** The lookup of a batch, compiled once (building it per batch showed in profiles). */
const SELECT_FAMILIES = `select ${FAMILY_COLUMNS.map((c) => `"${c}"`).join(', ')} from "refresh_token_families" where "id" = ANY($1::text[])`;

/** How many rotations before the latest are kept (those within the grace window, at most this many). */
const EARLIER_ROTATIONS_KEPT = 4;

function toFamily(row: FamilyRow): RefreshFamilyState {
  return {
    id: row.id,
    clientId: row.client_id,
    userId: row.user_id,
    scopes: row.scopes,
    claims: (typeof row.claims === 'string' ? JSON.parse(row.claims) : row.claims) as RefreshFamilyState['claims'],
    allowedScopes: row.allowed_scopes,
    nonce: row.nonce,
    authTime: row.auth_time,
    amr: row.amr,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    generation: row.generation,
    tokenSalt: Buffer.from(row.token_salt),
    rotatedAt: row.rotated_at,
    earlierRotations: row.earlier_rotations.map((at) => new Date(at)),
    tokenExpiresAt: row.token_expires_at,
    accessExpiresAt: row.access_expires_at,
  };
}

/** Marks live families revoked; returns those this call revoked, with what their revocation must cover. */
async function revokeFamilies(db: Db, familyIds: string[], reason: string, now: Date): Promise<RevokedFamilies> {
  if (familyIds.length === 0) return { families: [], legacyAccess: [] };
  const revoked = await db.updateTable('refresh_token_families')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', 'in', familyIds)
    .where('revoked_at', 'is', null)
    .returning(['id', 'access_expires_at'])
    .execute();
  if (revoked.length === 0) return { families: [], legacyAccess: [] };
  // Access tokens of a family from before generations carry no family claim: revoked one by one.
  const legacy = await db.selectFrom('refresh_tokens')
    .select(['access_jti', 'access_expires_at'])
    .where('family_id', 'in', revoked.map((f) => f.id))
    .where('access_expires_at', '>', now)
    .execute();
  return {
    families: revoked.map((f) => ({ id: f.id, accessExpiresAt: f.access_expires_at })),
    legacyAccess: legacy.map((r) => ({ jti: r.access_jti, expiresAt: r.access_expires_at })),
  };
}

/** Families by id, for a batch of lookups: one statement, results in the order asked. */
async function getFamilies(db: Db, ids: string[]): Promise<Array<RefreshFamilyState | undefined>> {
  const { rows } = await db.executeQuery<FamilyRow>(CompiledQuery.raw(SELECT_FAMILIES, [[...new Set(ids)]]));
  const byId = new Map(rows.map((row) => [row.id, toFamily(row)]));
  return ids.map((id) => byId.get(id));
}

/**
 * Rotations of a batch in one statement. A family asked twice in one batch goes once per
 * round (a statement updates a row once); rounds run one after the other. Should two
 * instances' batches deadlock on shared rows, the one PostgreSQL aborts runs row by row.
 */
async function advanceFamilies(db: Db, inputs: AdvanceInput[]): Promise<Array<boolean | Error>> {
  const results: Array<boolean | Error> = new Array<boolean>(inputs.length).fill(false);
  let left = inputs.map((input, index) => ({ input, index }));
  while (left.length > 0) {
    const seen = new Set<string>();
    const round: typeof left = [];
    const later: typeof left = [];
    for (const entry of left) {
      if (seen.has(entry.input.familyId)) later.push(entry);
      else {
        seen.add(entry.input.familyId);
        round.push(entry);
      }
    }
    left = later;
    // In id order, so that two instances' batches lock shared rows in the same order.
    round.sort((a, b) => (a.input.familyId < b.input.familyId ? -1 : 1));
    const advanced = await eachOnFailure(round.map((r) => r.input), async (some) => {
      const moved = await advanceRound(db, some);
      return some.map((input) => moved.has(input.familyId));
    });
    round.forEach(({ index }, i) => (results[index] = advanced[i] as boolean | Error));
  }
  return results;
}

async function advanceRound(db: Db, inputs: AdvanceInput[]): Promise<Set<string>> {
  const column = <T>(pick: (input: AdvanceInput) => T) => inputs.map(pick);
  const time = (pick: (input: AdvanceInput) => Date) => column((input) => pick(input).toISOString());
  const { rows } = await sql<{ id: string }>`
    UPDATE refresh_token_families AS f
    SET generation = f.generation + 1, rotated_at = v.issued_at,
        earlier_rotations = (ARRAY(
          SELECT at FROM unnest(array_prepend(f.rotated_at, f.earlier_rotations)) WITH ORDINALITY AS r(at, n)
          WHERE at >= v.grace_since ORDER BY n))[1:${sql.lit(EARLIER_ROTATIONS_KEPT)}],
        token_expires_at = LEAST(v.token_expires_at, f.expires_at),
        access_expires_at = GREATEST(v.access_expires_at, f.access_expires_at)
    FROM unnest(${column((i) => i.familyId)}::text[], ${column((i) => i.clientId)}::text[], ${column((i) => i.from)}::int[],
                ${time((i) => i.issuedAt)}::timestamptz[], ${time((i) => i.tokenExpiresAt)}::timestamptz[],
                ${time((i) => i.accessExpiresAt)}::timestamptz[], ${time((i) => i.now)}::timestamptz[], ${time((i) => i.graceSince)}::timestamptz[])
      AS v(id, client_id, from_generation, issued_at, token_expires_at, access_expires_at, now, grace_since)
    WHERE f.id = v.id AND f.client_id = v.client_id AND f.generation = v.from_generation
      AND f.revoked_at IS NULL AND f.expires_at > v.now AND f.token_expires_at > v.now
    RETURNING f.id`.execute(db);
  return new Set(rows.map((row) => row.id));
}

type NewFamily = Parameters<RefreshTokenRepository['createFamily']>[0];

/**
 * New families of a batch in one statement, passed as one JSON array (its array columns would
 * not survive unnest). Sliding idle expiry starts never past the family's absolute end.
 */
async function insertFamilies(db: Db, families: NewFamily[]): Promise<void[]> {
  const rows = families.map((f) => ({
    id: f.id, client_id: f.clientId, user_id: f.userId, scopes: f.scopes, claims: f.claims, allowed_scopes: f.allowedScopes,
    nonce: f.nonce, auth_time: f.authTime.toISOString(), amr: f.amr, expires_at: f.expiresAt.toISOString(),
    token_salt: `\\x${f.tokenSalt.toString('hex')}`, token_expires_at: f.tokenExpiresAt.toISOString(), access_expires_at: f.accessExpiresAt.toISOString(),
  }));
  await sql`
    INSERT INTO refresh_token_families (id, client_id, user_id, scopes, claims, allowed_scopes, nonce, auth_time, amr, expires_at,
                                        token_salt, token_expires_at, access_expires_at)
    SELECT id, client_id, user_id, scopes, claims, allowed_scopes, nonce, auth_time, amr, expires_at,
           token_salt, LEAST(token_expires_at, expires_at), access_expires_at
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(
      id text, client_id text, user_id text, scopes text[], claims jsonb, allowed_scopes text[], nonce text,
      auth_time timestamptz, amr text[], expires_at timestamptz, token_salt bytea, token_expires_at timestamptz, access_expires_at timestamptz)`.execute(db);
  return families.map(() => undefined);
}

/** Runs `fn` in a transaction: the handle's own when it is one already (a session ended with its event), else a new one. */
function transactionOf<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}

export function sqlRefreshTokens(db: Db): RefreshTokenRepository {
  const createFamily = batched((families: NewFamily[]) => eachOnFailure(families, (some) => insertFamilies(db, some)));
  const get = batched((ids: string[]) => getFamilies(db, ids));
  const advance = batched((inputs: AdvanceInput[]) => advanceFamilies(db, inputs));
  return {
    createFamily,

    get,

    async findLegacy(tokenHash) {
      const row = await db.selectFrom('refresh_tokens').select(['family_id', 'rotated_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
      return row ? { familyId: row.family_id, current: row.rotated_at === null } : undefined;
    },

    advance,

    revokeFamily: (familyId, reason, now) => transactionOf(db, (trx) => revokeFamilies(trx, [familyId], reason, now)),

    async purgeEnded(now, limit) {
      // SKIP LOCKED: instances purging at once share the work instead of waiting on each other.
      const { rows } = await sql<{ id: string }>`
        DELETE FROM refresh_token_families
        WHERE id IN (
          SELECT id FROM refresh_token_families
          WHERE expires_at <= ${now} AND access_expires_at <= ${now}
          LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING id`.execute(db);
      return rows.length;
    },

    async listForUser(userId, now) {
      const rows = await db.selectFrom('refresh_token_families')
        .select(['id', 'client_id', 'created_at', 'rotated_at', 'expires_at'])
        .where('user_id', '=', userId).where('revoked_at', 'is', null)
        .where('expires_at', '>', now).where('token_expires_at', '>', now)
        .orderBy('created_at').orderBy('id')
        .execute();
      return rows.map((r) => ({ id: r.id, clientId: r.client_id, createdAt: r.created_at, lastUsedAt: r.rotated_at ?? r.created_at, expiresAt: r.expires_at }));
    },

    revokeForUserAndClient: (userId, clientId, reason, now) =>
      transactionOf(db, async (trx) => {
        const families = await trx.selectFrom('refresh_token_families').select('id')
          .where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null)
          .execute();
        return revokeFamilies(trx, families.map((f) => f.id), reason, now);
      }),
  };
}
