/** The `clients` table (the README's Editing clients with SQL) <-> ClientRecord. */
import { sql, type Selectable, type Updateable } from 'kysely';
import type { ClientRecord, GrantType, Versioned } from '../records.ts';
import type { ClientRepository, UpsertResult } from '../types.ts';
import type { ClientsTable, Db } from './tables.ts';

function toRecord(row: Selectable<ClientsTable>): ClientRecord {
  return {
    clientId: row.client_id,
    displayName: row.display_name,
    enabled: row.enabled,
    secretHash: row.secret_hash,
    secretExpiresAt: row.secret_expires_at,
    grantTypes: row.grant_types as GrantType[],
    scopes: row.scopes,
    redirectUris: row.redirect_uris,
    postLogoutRedirectUris: row.post_logout_redirect_uris,
    corsOrigins: row.cors_origins,
    accessTokenLifetime: row.access_token_lifetime,
    requireConsent: row.require_consent,
    // Absent unless a rotation kept one (the CHECK sets both columns or neither).
    ...(row.previous_secret_hash !== null && row.previous_secret_expires_at !== null
      ? { previousSecret: { hash: row.previous_secret_hash, expiresAt: row.previous_secret_expires_at } }
      : {}),
  };
}

const versioned = (row: Selectable<ClientsTable>): Versioned<ClientRecord> => ({ record: toRecord(row), version: Number(row.version) });

type ClientColumns = Omit<Updateable<ClientsTable>, 'client_id' | 'version'>;

function toColumns(change: Partial<Omit<ClientRecord, 'clientId'>>): Partial<ClientColumns> {
  const columns: Partial<ClientColumns> = {};
  if (change.displayName !== undefined) columns.display_name = change.displayName;
  if (change.enabled !== undefined) columns.enabled = change.enabled;
  if (change.secretHash !== undefined) columns.secret_hash = change.secretHash;
  if (change.secretExpiresAt !== undefined) columns.secret_expires_at = change.secretExpiresAt;
  if (change.previousSecret !== undefined) {
    columns.previous_secret_hash = change.previousSecret?.hash ?? null;
    columns.previous_secret_expires_at = change.previousSecret?.expiresAt ?? null;
  }
  if (change.grantTypes !== undefined) columns.grant_types = change.grantTypes;
  if (change.scopes !== undefined) columns.scopes = change.scopes;
  if (change.redirectUris !== undefined) columns.redirect_uris = change.redirectUris;
  if (change.postLogoutRedirectUris !== undefined) columns.post_logout_redirect_uris = change.postLogoutRedirectUris;
  if (change.corsOrigins !== undefined) columns.cors_origins = change.corsOrigins;
  if (change.accessTokenLifetime !== undefined) columns.access_token_lifetime = change.accessTokenLifetime;
  if (change.requireConsent !== undefined) columns.require_consent = change.requireConsent;
  return columns;
}

export function sqlClients(db: Db): ClientRepository {
  return {
    async get(clientId) {
      const row = await db.selectFrom('clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
      return row ? toRecord(row) : undefined;
    },
    async getVersioned(clientId) {
      const row = await db.selectFrom('clients').selectAll().where('client_id', '=', clientId).executeTakeFirst();
      return row && versioned(row);
    },
    async list() {
      const rows = await db.selectFrom('clients').selectAll().orderBy('client_id').execute();
      return rows.map(toRecord);
    },
    async upsert(client): Promise<UpsertResult> {
      const { clientId, ...rest } = client;
      const columns = toColumns(rest);
      // The WHERE makes a no-op upsert write nothing (and notify no instance).
      const row = await db
        .insertInto('clients')
        .values({ ...(columns as Required<ClientColumns>), client_id: clientId })
        .onConflict((oc) =>
          oc.column('client_id').doUpdateSet(columns).where(
            sql<boolean>`(clients.display_name, clients.enabled, clients.secret_hash, clients.secret_expires_at,
              clients.grant_types, clients.scopes, clients.redirect_uris, clients.post_logout_redirect_uris,
              clients.cors_origins, clients.access_token_lifetime, clients.require_consent)
              IS DISTINCT FROM
              (excluded.display_name, excluded.enabled, excluded.secret_hash, excluded.secret_expires_at,
              excluded.grant_types, excluded.scopes, excluded.redirect_uris, excluded.post_logout_redirect_uris,
              excluded.cors_origins, excluded.access_token_lifetime, excluded.require_consent)`,
          ),
        )
        .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
        .executeTakeFirst();
      if (!row) return 'unchanged';
      return row.inserted ? 'created' : 'updated';
    },
    async insert(client) {
      const { clientId, ...rest } = client;
      const row = await db.insertInto('clients').values({ ...(toColumns(rest) as Required<ClientColumns>), client_id: clientId })
        .onConflict((oc) => oc.column('client_id').doNothing()).returningAll().executeTakeFirst();
      return row && versioned(row);
    },
    async update(clientId, change, ifVersion) {
      return (await this.change(clientId, change, ifVersion)) !== undefined;
    },
    async change(clientId, change, ifVersion) {
      const columns = toColumns(change);
      if (Object.keys(columns).length === 0) {
        const client = await this.getVersioned(clientId);
        return client !== undefined && (ifVersion === undefined || client.version === ifVersion) ? client : undefined;
      }
      let query = db.updateTable('clients').set(columns).where('client_id', '=', clientId);
      if (ifVersion !== undefined) query = query.where('version', '=', ifVersion);
      const row = await query.returningAll().executeTakeFirst();
      return row && versioned(row);
    },
    async remove(clientId, ifVersion) {
      let query = db.deleteFrom('clients').where('client_id', '=', clientId);
      if (ifVersion !== undefined) query = query.where('version', '=', ifVersion);
      const result = await query.executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async page({ after, limit }) {
      let query = db.selectFrom('clients').selectAll().orderBy('client_id').limit(limit);
      if (after !== undefined) query = query.where('client_id', '>', after);
      return (await query.execute()).map(toRecord);
    },
    async count() {
      const row = await db.selectFrom('clients').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
