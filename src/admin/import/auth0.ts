/**
 * `idp import FILE --format auth0`: Auth0's user export, one JSON object a line (the export
 * job's fields, `user_id` as `sub`), with the bcrypt hashes Auth0 hands over as `passwordHash`
 * (their export of password hashes names the user by `_id.$oid`). Read line by line.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { isObject, renamed, stringField, type ImportEntry } from './entries.ts';

const USER_FIELDS = {
  email: 'email', email_verified: 'email_verified', given_name: 'given_name', family_name: 'family_name', name: 'name',
  phone_number: 'phone_number', phone_verified: 'phone_number_verified', passwordHash: 'password_hash',
};

/** Auth0's `sub`: `user_id` (`auth0|…`), or the database connection's id of the hash export. */
function subjectOf(record: Record<string, unknown>): string | undefined {
  const userId = stringField(record, 'user_id');
  if (userId !== undefined) return userId;
  const oid = isObject(record._id) ? stringField(record._id, '$oid') : undefined;
  return oid === undefined ? undefined : `auth0|${oid}`;
}

export function auth0User(record: unknown, at: string): ImportEntry {
  if (!isObject(record)) return { type: 'user', at, name: '?', user: {}, subject: undefined, problems: [{ field: '', message: 'must be a JSON object' }], origin: {}, notes: [] };
  const { fields, origin } = renamed(record, USER_FIELDS);
  // A database connection without usernames signs its users in by email.
  const username = stringField(record, 'username') ?? stringField(record, 'email');
  const user: Record<string, unknown> = { ...fields, username };
  if (record.blocked === true) user.locked = true;
  const problems = [];
  if (record.passwordHash === undefined) problems.push({ field: '/passwordHash', message: 'required (a user of a social or enterprise connection signs in there)' });
  const subject = subjectOf(record);
  if (subject === undefined) problems.push({ field: '/user_id', message: 'required (it becomes the sub)' });
  return {
    type: 'user', at, name: username ?? '?', user, subject, problems, notes: [],
    origin: { ...origin, username: record.username === undefined ? '/email' : '/username', sub: '/user_id', locked: '/blocked' },
  };
}

/** Each line's user; a line that is not JSON is a record refused, not the end of the file. */
export async function* auth0Entries(input: Readable): AsyncGenerator<ImportEntry> {
  let number = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    number += 1;
    if (line.trim() === '') continue;
    const at = `line ${number}`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      yield { type: 'user', at, name: '?', user: {}, subject: undefined, problems: [{ field: '', message: 'is not JSON' }], origin: {}, notes: [] };
      continue;
    }
    yield auth0User(record, at);
  }
}
