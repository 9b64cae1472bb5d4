/** API scopes created by administrators, and the consents users gave to clients. */
import { sql, type Selectable } from 'kysely';
import type { ApiScopeRecord } from '../records.ts';
import type { ApiScopeRepository, ConsentRepository } from '../types.ts';
import type { ApiScopesTable, Db } from './tables.ts';

const SCOPE_COLUMNS = ['name', 'created_at', 'version'] as const;

function toScopeRecord(row: Pick<Selectable<ApiScopesTable>, (typeof SCOPE_COLUMNS)[number]>): ApiScopeRecord {
  return { name: row.name, createdAt: row.created_at, version: Number(row.version) };
}

export function sqlApiScopes(db: Db): ApiScopeRepository {
  return {
    async list() {
      const rows = await db.selectFrom('api_scopes').select('name').orderBy('name').execute();
      return rows.map((r) => r.name);
    },
    async add(name) {
      return (await this.insert(name)) !== undefined;
    },
    async insert(name) {
      const row = await db.insertInto('api_scopes').values({ name }).onConflict((oc) => oc.column('name').doNothing()).returning(SCOPE_COLUMNS).executeTakeFirst();
      return row ? toScopeRecord(row) : undefined;
    },
    async get(name) {
      const row = await db.selectFrom('api_scopes').select(SCOPE_COLUMNS).where('name', '=', name).executeTakeFirst();
      return row ? toScopeRecord(row) : undefined;
    },
    async page({ after, limit }) {
      let query = db.selectFrom('api_scopes').select(SCOPE_COLUMNS).orderBy('name').limit(limit);
      if (after !== undefined) query = query.where('name', '>', after);
      return (await query.execute()).map(toScopeRecord);
    },
    async remove(name, ifVersion) {
      let query = db.deleteFrom('api_scopes').where('name', '=', name);
      if (ifVersion !== undefined) query = query.where('version', '=', ifVersion);
      const result = await query.executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

export function sqlConsents(db: Db): ConsentRepository {
  return {
    async get(userId, clientId) {
      const row = await db.selectFrom('consents').select('scopes').where('user_id', '=', userId).where('client_id', '=', clientId).executeTakeFirst();
      return row?.scopes ?? [];
    },
    async grant(userId, clientId, scopes) {
      await db
        .insertInto('consents')
        .values({ user_id: userId, client_id: clientId, scopes: [...new Set(scopes)] })
        .onConflict((oc) =>
          oc.columns(['user_id', 'client_id']).doUpdateSet({
            scopes: sql`ARRAY(SELECT DISTINCT unnest(consents.scopes || excluded.scopes) ORDER BY 1)`,
            granted_at: sql`now()`,
          }),
        )
        .execute();
    },
    async revoke(userId, clientId) {
      await db.deleteFrom('consents').where('user_id', '=', userId).where('client_id', '=', clientId).execute();
    },
    async listForUser(userId) {
      const rows = await db.selectFrom('consents').select(['client_id', 'scopes', 'granted_at']).where('user_id', '=', userId).orderBy('client_id').execute();
      return rows.map((r) => ({ clientId: r.client_id, scopes: r.scopes, grantedAt: r.granted_at }));
    },
  };
}
