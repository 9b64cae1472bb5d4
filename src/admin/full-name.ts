/**
 * The OpenID Connect `name` claim and its parts, `given_name` and `family_name`: one rule for
 * every way a user is made or changed (the account page, the administration API, the command
 * line, a seed file). A name that was the parts' ("given family", or absent) follows them; a
 * name set on its own stays; a name given in the same change wins.
 */

interface NameParts {
  givenName: string | null;
  familyName: string | null;
}

/** "given family", from the parts there are; null when there are none. */
export function fullName({ givenName, familyName }: NameParts): string | null {
  return [givenName, familyName].filter((part) => part !== null && part !== '').join(' ') || null;
}

/** `name` after a change of the parts from `before` to `after`; `explicit`, when the change sets `name` itself. */
export function nameAfter(before: NameParts & { name: string | null }, after: NameParts, explicit: string | null | undefined): string | null {
  if (explicit !== undefined) return explicit;
  // A change that leaves the parts as they were leaves the name too (an absent name stays absent).
  if (before.givenName === after.givenName && before.familyName === after.familyName) return before.name;
  const followed = before.name === null || before.name === fullName(before);
  return followed ? fullName(after) : before.name;
}
