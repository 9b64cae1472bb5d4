/**
 * Local usernames are stored in the form sign-in looks them up by: trimmed, in lower case. A
 * name stored as `"ALICE "` beside `alice` was a second account that could never sign in (the
 * sign-in form's `ALICE ` finds `alice`); from now on the database refuses such a row, and
 * the unique index on lower(username) then refuses every second spelling of a name.
 *
 * Existing names are rewritten to that form. Where two accounts would then share a name, the
 * migration stops (its transaction leaves everything as it was) and names them: which one is
 * the real account is an administrator's decision, not one to take silently.
 */
import { sql, type Kysely } from 'kysely';

const NAME = '2026-11-27-0001-canonical-usernames';

/** What the local sign-in source does to a typed name (frozen here as it was when this landed). */
const canonical = (username: string) => username.trim().toLowerCase();

/** The whitespace JavaScript's trim() removes, for the check below (PostgreSQL's own classes vary by locale). */
const SPACE = '[[:space:]\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]';

export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ id: string; username: string }>`SELECT id, username FROM users WHERE source = 'local' ORDER BY username, id`.execute(db);
  const byName = new Map<string, Array<{ id: string; username: string }>>();
  for (const row of rows) byName.set(canonical(row.username), [...(byName.get(canonical(row.username)) ?? []), row]);
  const clashes = [...byName.values()].filter((group) => group.length > 1);
  if (clashes.length > 0) {
    const list = clashes.map((group) => group.map((u) => `${JSON.stringify(u.username)} (id ${u.id})`).join(' and ')).join('; ');
    throw new Error(
      `migration ${NAME} refused: these local accounts differ only by case or surrounding spaces, so sign-in finds only one of each group: ${list}; remove or rename all but one of each group (SQL on the users table), then start again`,
    );
  }
  for (const row of rows) {
    if (row.username !== canonical(row.username)) {
      await sql`UPDATE users SET username = ${canonical(row.username)} WHERE id = ${row.id}`.execute(db);
    }
  }
  await sql`
    ALTER TABLE users ADD CONSTRAINT users_local_username_canonical CHECK (
      source <> 'local' OR (username = lower(username) AND username !~ ${sql.lit(`^${SPACE}|${SPACE}$`)})
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users DROP CONSTRAINT users_local_username_canonical`.execute(db);
}
