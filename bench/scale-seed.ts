/**
 * Rows bulk-inserted with generate_series (not through the API), then VACUUM ANALYZE: clients,
 * users and refresh token families, each family rotated once (at generation 1, as after one
 * refresh). Values have the shapes the service writes: random 128-bit user ids, UUID family ids,
 * 32-byte salts. `--scale` seeds its large database with SCALE; the standard run seeds
 * BACKGROUND first, the data of a deployment some weeks in (see BACKGROUND).
 */
import pg from 'pg';
import { hashPassword } from '../src/sources/passwords.ts';
import { hashClientSecret } from '../src/tokens/opaque.ts';

export interface SeedRows {
  clients: number;
  users: number;
  families: number;
}

export const SCALE: SeedRows = { clients: 10_000, users: 100_000, families: 1_000_000 };

/**
 * A production database has rows and statistics: autovacuum analyzes a table as it grows. A
 * database created for the run has neither, and PostgreSQL then plans the service's prepared
 * statements as for a table of a few rows (a sequential scan), keeps those plans for the
 * connection until the next ANALYZE, and runs them on the tens of thousands of families the
 * rounds' code exchanges insert: refresh lost half its pace over three rounds that way.
 */
export const BACKGROUND: SeedRows = { clients: 1_000, users: 10_000, families: 100_000 };
const BATCH = 100_000;

/** base64url of the first `bytes` of SHA-256(text): the shape of the service's ids and hashes. */
const b64url = (expr: string, bytes = 32) =>
  `translate(rtrim(encode(substring(sha256(convert_to(${expr}, 'UTF8')) from 1 for ${bytes}), 'base64'), '='), '+/', '-_')`;
const userId = (n: string) => b64url(`'scale-user-' || ${n}`, 16);

export interface SeedTimings {
  clientsSeconds: number;
  usersSeconds: number;
  familiesSeconds: number;
  analyzeSeconds: number;
  totalSeconds: number;
}

export async function seedRows(databaseUrl: string, rows: SeedRows, log: (line: string) => void): Promise<SeedTimings> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const started = performance.now();
  const lap = (() => {
    let last = started;
    return () => {
      const now = performance.now();
      const seconds = (now - last) / 1000;
      last = now;
      return seconds;
    };
  })();
  try {
    await db.query(
      `INSERT INTO clients (client_id, display_name, secret_hash, grant_types, scopes, redirect_uris, access_token_lifetime)
       SELECT 'scale-client-' || i, 'Scale client ' || i, $1, '{authorization_code,refresh_token}',
              '{openid,profile,email,offline_access}', ARRAY['https://app' || i || '.example/callback'], 3600
       FROM generate_series(1, ${rows.clients}) AS i`,
      [hashClientSecret('scale-client-secret-0123456789abcdefghijklmn')],
    );
    const clientsSeconds = lap();
    log(`  ${rows.clients} clients in ${clientsSeconds.toFixed(1)} s`);
    await db.query(
      `INSERT INTO users (id, source, subject, username, password_hash, given_name, family_name, name, email, email_verified, roles)
       SELECT ${userId('i')}, 'local', ${userId('i')}, 'scale-user-' || i, $1, 'Given' || i, 'Family' || i,
              'Given' || i || ' Family' || i, 'scale-user-' || i || '@example.com', true, '{viewer}'
       FROM generate_series(1, ${rows.users}) AS i`,
      [await hashPassword('scale user password 0123456789')],
    );
    const usersSeconds = lap();
    log(`  ${rows.users} users in ${usersSeconds.toFixed(1)} s`);
    for (let from = 1; from <= rows.families; from += BATCH) {
      await db.query(familiesBatch(rows), [from, Math.min(rows.families, from + BATCH - 1)]);
    }
    const familiesSeconds = lap();
    log(`  ${rows.families} families in ${familiesSeconds.toFixed(1)} s`);
    await db.query('VACUUM ANALYZE');
    const analyzeSeconds = lap();
    return { clientsSeconds, usersSeconds, familiesSeconds, analyzeSeconds, totalSeconds: (performance.now() - started) / 1000 };
  } finally {
    await db.end();
  }
}

/** One batch of families ($1..$2): spread over every client and user, created over 60 days. */
function familiesBatch(rows: SeedRows): string {
  return `
    WITH src AS MATERIALIZED (
      SELECT i, gen_random_uuid()::text AS fid, now() - random() * interval '60 days' AS created
      FROM generate_series($1::int, $2::int) AS i
    )
    INSERT INTO refresh_token_families (id, client_id, user_id, scopes, allowed_scopes, auth_time, amr, created_at, expires_at,
                                        generation, token_salt, rotated_at, token_expires_at, access_expires_at)
    SELECT fid, 'scale-client-' || (1 + i % ${rows.clients}), ${userId(`(1 + i % ${rows.users})`)},
           '{openid,profile,offline_access}', '{openid,profile,email,offline_access}', created, '{pwd}', created, created + interval '90 days',
           1, decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'), created + interval '1 hour',
           created + interval '15 days', created + interval '2 hours'
    FROM src`;
}
