/** What each scope means, in words, for the consent page. */
const DESCRIPTIONS: Record<string, string> = {
  openid: 'Sign you in and know who you are',
  profile: 'Your name, username and profile details',
  email: 'Your email address',
  phone: 'Your phone number',
  roles: 'Your roles',
  offline_access: 'Stay signed in and act for you while you are away',
};

export function describeScopes(scopes: readonly string[]): Array<{ name: string; description: string }> {
  return scopes.map((name) => ({ name, description: DESCRIPTIONS[name] ?? `Access to ${name}` }));
}
