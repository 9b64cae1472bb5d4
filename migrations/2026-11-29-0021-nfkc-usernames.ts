/**
 * Local usernames in the form sign-in now looks them up by: compatibility-normalised (NFKC), and
 * without the characters that show as nothing (Unicode Default_Ignorable_Code_Point), besides
 * trimmed and in lower case. `ａlice` (fullwidth) would otherwise be an account nobody reaches by
 * typing its name, and `alice\u200b` one that passes for `alice`.
 *
 * Existing names are rewritten to that form. Where two accounts would then share a name, the
 * migration stops (its transaction leaves everything as it was) and names them, as
 * 2026-11-27-0001 does: which one is the real account is an administrator's decision. From now
 * on the database refuses a local name holding such a character.
 */
import { sql, type Kysely } from 'kysely';

const NAME = '2026-11-29-0021-nfkc-usernames';

/** Default_Ignorable_Code_Point (Unicode 15.1 DerivedCoreProperties), frozen here as it was when this landed. */
const INVISIBLE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0xad, 0xad], [0x34f, 0x34f], [0x61c, 0x61c], [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x200b, 0x200f],
  [0x202a, 0x202e], [0x2060, 0x206f], [0x3164, 0x3164], [0xfe00, 0xfe0f], [0xfeff, 0xfeff], [0xffa0, 0xffa0], [0xfff0, 0xfff8],
  [0x1bca0, 0x1bca3], [0x1d173, 0x1d17a], [0xe0000, 0xe0fff],
];
const INVISIBLE_CLASS = `[${INVISIBLE_RANGES.map(([from, to]) => (from === to ? String.fromCodePoint(from) : `${String.fromCodePoint(from)}-${String.fromCodePoint(to)}`)).join('')}]`;
const INVISIBLE = new RegExp(INVISIBLE_CLASS, 'gu');

/** What the local sign-in source does to a typed name (frozen here as it was when this landed). */
const canonical = (username: string) => username.normalize('NFKC').replace(INVISIBLE, '').toLowerCase().normalize('NFKC').trim();

export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ id: string; username: string }>`SELECT id, username FROM users WHERE source = 'local' ORDER BY username, id`.execute(db);
  const byName = new Map<string, Array<{ id: string; username: string }>>();
  for (const row of rows) byName.set(canonical(row.username), [...(byName.get(canonical(row.username)) ?? []), row]);
  const clashes = [...byName.values()].filter((group) => group.length > 1);
  if (clashes.length > 0) {
    const list = clashes.map((group) => group.map((u) => `${JSON.stringify(u.username)} (id ${u.id})`).join(' and ')).join('; ');
    throw new Error(
      `migration ${NAME} refused: these local accounts differ only by look-alike or invisible characters, so sign-in finds only one of each group: ${list}; remove or rename all but one of each group (SQL on the users table), then start again`,
    );
  }
  for (const row of rows) {
    if (row.username !== canonical(row.username)) {
      await sql`UPDATE users SET username = ${canonical(row.username)} WHERE id = ${row.id}`.execute(db);
    }
  }
  await sql`ALTER TABLE users ADD CONSTRAINT users_local_username_visible CHECK (source <> 'local' OR username !~ ${sql.lit(INVISIBLE_CLASS)})`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users DROP CONSTRAINT users_local_username_visible`.execute(db);
}
