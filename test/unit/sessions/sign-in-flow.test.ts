/**
 * The sign-in flow without HTTP (src/sessions/sign-in/sign-in-flow.ts, step-forms.ts) on the in-process
 * store: what each request is answered (a page, a redirect, the client's response, the cookie),
 * and that a request reads the users and the consents at most once.
 */
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/errors.ts';
import type { RecoveryCodeDeps } from '../../../src/factors/recovery-codes.ts';
import type { AuthorizationRequest, AuthorizationTarget } from '../../../src/sessions/sign-in/authorization-request.ts';
import { createSessionStore } from '../../../src/sessions/browser-session.ts';
import type { BrowserRequest, FlowResult } from '../../../src/sessions/sign-in/flow-types.ts';
import { createInteractionStore } from '../../../src/sessions/sign-in/interaction.ts';
import type { Passkeys } from '../../../src/factors/passkeys.ts';
import type { MfaSecrets } from '../../../src/factors/authenticator-app.ts';
import { createSignInFlow } from '../../../src/sessions/sign-in/sign-in-flow.ts';
import { createStepForms } from '../../../src/sessions/sign-in/step-forms.ts';
import { createDeviceCookies } from '../../../src/sessions/device-cookie.ts';
import { createSignInThrottle } from '../../../src/sessions/throttle.ts';
import type { PasswordSignInSource } from '../../../src/sources/types.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import type { ClientRecord, UserRecord } from '../../../src/store/records.ts';

const alice: UserRecord = {
  id: 'u-alice', source: 'local', subject: 'u-alice', username: 'alice', passwordHash: null, givenName: null, familyName: null,
  name: 'Alice', email: null, emailVerified: false, phoneNumber: null, phoneNumberVerified: false, roles: [], factors: [],
  locked: false, mustChangePassword: false, mustEnrolMfa: false, createdAt: new Date(0), updatedAt: new Date(0),
};

const request: AuthorizationRequest = {
  clientId: 'app', redirectUri: 'https://app.example/cb', responseMode: 'query', state: 'st', scopes: ['openid', 'profile'],
  codeChallenge: 'x'.repeat(43), nonce: undefined, prompt: [], maxAge: undefined, hintSubject: undefined, claims: undefined,
};

function harness(clientOverrides: Partial<ClientRecord> = {}) {
  const clock = () => 1_800_000_000_000;
  const ephemeral = createMemoryEphemeralStore(clock);
  const client: ClientRecord = {
    clientId: 'app', displayName: 'App', enabled: true, secretHash: null, secretExpiresAt: null, grantTypes: ['authorization_code'],
    scopes: ['openid', 'profile'], redirectUris: [request.redirectUri], postLogoutRedirectUris: [], corsOrigins: [],
    accessTokenLifetime: 600, requireConsent: false, ...clientOverrides,
  };
  const reads = { users: 0, consents: 0, signIns: 0 };
  const consented = new Map<string, string[]>();
  const users = { getById: async (id: string) => (reads.users++, id === alice.id ? alice : undefined) };
  const consents = {
    get: async (userId: string, clientId: string) => (reads.consents++, consented.get(`${userId} ${clientId}`) ?? []),
    grant: async (userId: string, clientId: string, scopes: string[]) => {
      consented.set(`${userId} ${clientId}`, [...new Set([...(consented.get(`${userId} ${clientId}`) ?? []), ...scopes])]);
    },
  };
  const source: PasswordSignInSource = {
    kind: 'local',
    canonicalAccountName: (typed) => typed.trim().toLowerCase(),
    signIn: async (username, password) => {
      reads.signIns++;
      return username === 'alice' && password === 'right' ? { ok: true, user: alice, amr: ['pwd'] } : { ok: false, reason: 'invalid_credentials' };
    },
    currentUser: async (user) => user,
  };
  const sessions = createSessionStore(ephemeral, clock);
  const interactions = createInteractionStore(ephemeral, clock);
  const throttle = createSignInThrottle(ephemeral, { maxFailures: 5, maxFailuresPerAddress: 20, maxFailuresPerAccount: 20, maxAttemptsPerInteraction: 5 });
  const deviceCookies = createDeviceCookies({ current: Buffer.alloc(32, 7), previous: [] }, clock);
  const flow = createSignInFlow({
    issuer: 'https://idp.example', basePath: '', clock, clients: { get: async () => client }, users, consents, sessions, interactions,
    ephemeral, throttle, deviceCookies, canonicalAccountName: (typed) => typed.toLowerCase(),
  });
  const forms = createStepForms({
    flow, interactions, sessions, consents, source, throttle, deviceCookies, mfa: {} as MfaSecrets,
    recoveryCodes: {} as RecoveryCodeDeps, change: () => Promise.reject(new Error('no change of an account here')), notices: { mail: () => {} }, passkeys: {} as Passkeys, users: { update: async () => true },
    changePassword: async () => undefined, passwordChanged: async () => undefined, canonicalAccountName: (typed) => typed.toLowerCase(),
  });
  const audits: Array<Record<string, unknown>> = [];
  const trusted: AuthorizationTarget[] = [];
  /** One browser: it keeps the cookie it is given. */
  let sessionId: string | undefined;
  const browser = (): BrowserRequest => ({
    sessionId, address: '192.0.2.1', userAgent: 'test', cookie: () => undefined, audit: ({ type, ...fields }) => void audits.push({ event: type, ...fields }), trust: (target) => trusted.push(target),
  });
  const answer = (result: FlowResult) => {
    if (result.newSessionId !== undefined) sessionId = result.newSessionId;
    return result.outcome;
  };
  /** The interaction id of a redirect to its page. */
  const interactionOf = (location: string) => decodeURIComponent(/\/interaction\/([^/]+)$/.exec(location)![1]!);
  const csrfOf = async (id: string) => (await interactions.load(id))!.csrfToken;
  return { forms, flow, reads, audits, trusted, browser, answer, interactionOf, csrfOf, cookie: () => sessionId };
}

describe('the sign-in flow (no HTTP)', () => {
  it('signs a new visitor in with a password and answers the client, reading the user once (from the source) and no consent', async () => {
    const h = harness();
    const begun = h.answer(await h.flow.begin(h.browser(), request));
    expect(begun.kind).toBe('redirect');
    const anonymousCookie = h.cookie();
    expect(anonymousCookie).toBeDefined();
    const id = h.interactionOf(begun.kind === 'redirect' ? begun.location : '');

    const page = h.answer(await h.forms.view(h.browser(), id));
    expect(page).toMatchObject({ kind: 'show-step', step: 'sign-in', action: `/interaction/${encodeURIComponent(id)}/sign-in` });
    expect(h.trusted).toMatchObject([{ clientId: 'app', redirectUri: request.redirectUri, state: 'st' }]);

    const csrf = await h.csrfOf(id);
    const wrong = h.answer(await h.forms['sign-in'](h.browser(), id, { csrf_token: csrf, username: ' Alice ', password: 'wrong' }));
    expect(wrong).toMatchObject({ kind: 'show-step', step: 'sign-in', feedback: { username: 'Alice', invalid: ['username', 'password'] } });

    const before = { ...h.reads };
    const signedIn = h.answer(await h.forms['sign-in'](h.browser(), id, { csrf_token: csrf, username: 'alice', password: 'right' }));
    expect(signedIn).toStrictEqual({
      kind: 'respond-to-client',
      response: { mode: 'redirect', location: expect.stringMatching(/^https:\/\/app\.example\/cb\?code=[A-Za-z0-9_-]{43}&state=st&iss=https%3A%2F%2Fidp\.example$/) },
    });
    expect(h.cookie()).not.toBe(anonymousCookie);
    expect({ users: h.reads.users - before.users, consents: h.reads.consents - before.consents, signIns: h.reads.signIns - before.signIns })
      .toStrictEqual({ users: 0, consents: 0, signIns: 1 });
    expect(h.audits.map((a) => [a.event, a.result])).toStrictEqual([['sign_in', 'failure'], ['sign_in', 'success']]);
  });

  it('asks consent after the password, reads the consents once per request, and answers with a code once allowed', async () => {
    const h = harness({ requireConsent: true });
    const begun = h.answer(await h.flow.begin(h.browser(), request));
    const interactionId = h.interactionOf(begun.kind === 'redirect' ? begun.location : '');
    const csrf = await h.csrfOf(interactionId);
    const signedIn = h.answer(await h.forms['sign-in'](h.browser(), interactionId, { csrf_token: csrf, username: 'alice', password: 'right' }));
    expect(signedIn).toStrictEqual({ kind: 'redirect', location: `/interaction/${encodeURIComponent(interactionId)}` });
    expect(h.reads.consents).toBe(1);

    const before = { ...h.reads };
    const page = h.answer(await h.forms.view(h.browser(), interactionId));
    expect(page).toMatchObject({ kind: 'show-step', step: 'consent' });
    const allowed = h.answer(await h.forms.consent(h.browser(), interactionId, { csrf_token: csrf, decision: 'allow' }));
    expect(allowed).toMatchObject({ kind: 'respond-to-client', response: { mode: 'redirect' } });
    // Two requests (the page, the form): the user and the consents once each per request.
    expect({ users: h.reads.users - before.users, consents: h.reads.consents - before.consents }).toStrictEqual({ users: 2, consents: 2 });
  });

  it('keeps the new cookie when prompt=none ends at once with login_required', async () => {
    const h = harness();
    const result = await h.flow.begin(h.browser(), { ...request, prompt: ['none'] });
    expect(result.newSessionId).toBeDefined();
    expect(result.outcome.kind).toBe('error');
    const error = result.outcome.kind === 'error' ? result.outcome.error : undefined;
    expect(error instanceof OAuthError && error.code).toBe('login_required');
  });

  it('refuses a form without its CSRF token, or from another browser', async () => {
    const h = harness();
    const begun = h.answer(await h.flow.begin(h.browser(), request));
    const id = h.interactionOf(begun.kind === 'redirect' ? begun.location : '');
    await expect(h.forms['sign-in'](h.browser(), id, { username: 'alice', password: 'right' })).rejects.toThrow('not sent from the browser');
    const other = { ...h.browser(), sessionId: 'another-browser' };
    await expect(h.forms['sign-in'](other, id, { csrf_token: await h.csrfOf(id), username: 'alice', password: 'right' })).rejects.toThrow('not sent from the browser');
    await expect(h.forms.view(h.browser(), 'no-such-interaction')).rejects.toThrow('expired');
  });
});
