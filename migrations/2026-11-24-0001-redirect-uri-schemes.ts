/**
 * Redirect URIs may no longer use any scheme (RFC 9700 §2.1, RFC 8252 §7): `https`, `http` on a
 * loopback address, or a private-use scheme containing a period. `javascript:` and `data:`
 * URIs are refused by the database as by `idp clients add` and `idp seed` (src/cli/rules.ts).
 *
 * A database that already holds a URI the new rule refuses is not upgraded: the migration stops
 * (its transaction leaves everything as it was) and names each client and URI, so an
 * administrator decides what each should become, rather than a client losing a URI silently.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION idp_is_redirect_uri(uri text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      -- RFC 6749 3.1.2: absolute URI, no fragment; no whitespace or control characters.
      SELECT uri ~ '^[A-Za-z][A-Za-z0-9+.-]*:[^#[:space:][:cntrl:]]+$'
         AND (uri ~* '^https://[^/?#@[:space:]]+(/[^#]*)?$'
              -- RFC 8252 7.3: plain http only to the loopback interface.
              OR uri ~* '^http://(localhost|127\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}|\\[::1\\])(:[0-9]{1,5})?(/[^#]*)?$'
              -- RFC 8252 7.1: a private-use scheme is reverse-DNS, so it contains a period.
              OR uri ~ '^[A-Za-z][A-Za-z0-9+-]*\\.[A-Za-z0-9+.-]*:')
    $$`.execute(db);

  const refused = await sql<{ client_id: string; uri: string }>`
    SELECT client_id, uri FROM clients, unnest(redirect_uris || post_logout_redirect_uris) AS uri
    WHERE NOT idp_is_redirect_uri(uri) ORDER BY client_id, uri`.execute(db);
  if (refused.rows.length > 0) {
    const list = refused.rows.map((r) => `${r.client_id} ${JSON.stringify(r.uri)}`).join(', ');
    throw new Error(
      `migration 2026-11-24-0001-redirect-uri-schemes refused: these registered redirect URIs are neither https, http on a loopback address, nor a private-use scheme with a period: ${list}; change or remove them (idp seed, or SQL on the clients table), then start again`,
    );
  }

  // Re-adding the constraints checks every row under the new rule, as any later dump and restore would.
  for (const column of ['redirect_uris', 'post_logout_redirect_uris']) {
    await sql`ALTER TABLE clients DROP CONSTRAINT ${sql.id(`clients_${column}_format`)},
      ADD CONSTRAINT ${sql.id(`clients_${column}_format`)} CHECK (idp_all_redirect_uris(${sql.id(column)}))`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION idp_is_redirect_uri(uri text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT uri ~ '^[A-Za-z][A-Za-z0-9+.-]*:[^#[:space:][:cntrl:]]+$'
         AND (uri !~* '^https?:' OR uri ~* '^https?://[^/?#@[:space:]]+(/[^#]*)?$')
    $$`.execute(db);
}
