/**
 * The protocol's working parts, made once from the opened services (services.ts): the sign-in
 * flow and its step forms, the grants, and what introspection, revocation, end session and the
 * upstream round trips use. No I/O here; app.ts hands them to the routes.
 */
import type { ServicesBase } from './base.ts';
import { listApplications, removeApplicationAccess, type Application, type ApplicationsDeps } from '../admin/applications.ts';
import { endOtherBrowserSessions, endOtherBrowserSessionsAfterPasswordChange, endUserSession, endUserSessions, listUserSessions, type EndedSession, type EndedSessions, type Recording, type UserSessions, type UserSessionsDeps } from '../admin/sessions.ts';
import { createGrants, type Grants, type GrantsDeps } from '../grants/index.ts';
import type { EndSessionDeps } from '../sessions/end-session.ts';
import type { IntrospectionDeps } from '../protocol/introspection.ts';
import type { RevocationDeps } from '../protocol/revocation.ts';
import { createSignInFlow, type SignInFlow } from '../sessions/sign-in/sign-in-flow.ts';
import { createStepForms, type StepForms } from '../sessions/sign-in/step-forms.ts';
import { createPasswordChanged } from '../sessions/password-changed.ts';
import { createPasswordRecovery } from '../sessions/recovery/password-recovery.ts';
import { createRecoveryFlow, type RecoveryFlow } from '../sessions/recovery/recovery-flow.ts';
import { startUpstreamSignIn, upstreamSignOutUrl, type SignOutTrip, type UpstreamDeps } from '../sessions/sign-in/upstream.ts';

export interface ProtocolServices {
  signInFlow: SignInFlow;
  /** What each sign-in page's form does (sessions/sign-in/step-forms.ts). */
  stepForms: StepForms;
  /** The token endpoint's grants, by grant_type. */
  grants: Grants;
  /** What introspection and revocation look tokens up and revoke with. */
  tokenEndpoints: IntrospectionDeps & RevocationDeps;
  endSession: EndSessionDeps;
  /** With an upstream OpenID Connect provider as the sign-in source: its round trips. */
  upstream: UpstreamDeps | undefined;
  /** "Forgot password" by mail: local accounts, and a mailer that can send (else undefined). */
  recovery: RecoveryFlow | undefined;
  /** A user's sessions and applications, listed and ended (admin/sessions.ts, admin/applications.ts). */
  userSessions: UserSessionServices;
}

/**
 * The functions of admin/sessions.ts and admin/applications.ts with their dependencies given;
 * each ending writes the events `recording` makes in its transaction.
 */
export interface UserSessionServices {
  listUserSessions(userId: string, options?: { currentKey?: string | undefined }): Promise<UserSessions>;
  endUserSessions(userId: string, recording: Recording<EndedSessions>): Promise<EndedSessions>;
  endUserSession(userId: string, sessionId: string, recording: Recording<EndedSession>): Promise<EndedSession>;
  endOtherBrowserSessions(userId: string, exceptKey: string | undefined, recording: Recording<number>): Promise<number>;
  endOtherBrowserSessionsAfterPasswordChange(userId: string, exceptKey: string): Promise<number>;
  listApplications(userId: string): Promise<Application[]>;
  removeApplicationAccess(userId: string, clientId: string, recording: Recording<void>): Promise<void>;
}

function userSessionServices(deps: UserSessionsDeps & ApplicationsDeps): UserSessionServices {
  return {
    listUserSessions: (userId, options) => listUserSessions(deps, userId, options),
    endUserSessions: (userId, recording) => endUserSessions(deps, userId, recording),
    endUserSession: (userId, sessionId, recording) => endUserSession(deps, userId, sessionId, recording),
    endOtherBrowserSessions: (userId, exceptKey, recording) => endOtherBrowserSessions(deps, userId, exceptKey, recording),
    endOtherBrowserSessionsAfterPasswordChange: (userId, exceptKey) => endOtherBrowserSessionsAfterPasswordChange(deps, userId, exceptKey),
    listApplications: (userId) => listApplications(deps, userId),
    removeApplicationAccess: (userId, clientId, recording) => removeApplicationAccess(deps, userId, clientId, recording),
  };
}

/** The path part of the base URL, without a trailing slash: every route lives under it. */
export function basePathOf(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, '');
}

export function createProtocolServices(services: ServicesBase): ProtocolServices {
  const { config, clock, keys, ephemeral, durable, users, clients, interactions, sessions, throttle, canonicalAccountName, source } = services;
  const upstream = source.kind === 'oidc' ? { upstream: source, ephemeral, baseUrl: config.baseUrl } : undefined;
  const signInFlow = createSignInFlow({
    issuer: config.issuer, basePath: basePathOf(config.baseUrl), clock, clients, users, consents: durable.consents, sessions, interactions, ephemeral, throttle, canonicalAccountName,
    deviceCookies: services.deviceCookies,
  });
  const userSessions = userSessionServices({
    clock, users, clients, sessions, consents: durable.consents, refreshTokens: durable.refreshTokens, accessTokens: durable.accessTokens, revocations: services.revocations, durable,
  });
  const recoveryPath = `${config.baseUrl}/account/recover/code`;
  const passwordRecovery = createPasswordRecovery({
    clock, ephemeral, users, throttle, mailer: services.mailer, brand: services.mailBrand,
    // Grouped: the code stays the only run of 8 digits in the message (what a reader or a mail client picks out).
    codeLink: (recoveryId, code) => `${recoveryPath}?${new URLSearchParams({ recovery: recoveryId, code: `${code.slice(0, 4)}-${code.slice(4)}` })}`,
  });
  const recovery = source.kind === 'local' && services.mailer.available
    ? createRecoveryFlow({
      recovery: passwordRecovery, flow: signInFlow, interactions, sessions, users, csrfKey: services.csrfKey, canonicalAccountName,
      accountPath: `${basePathOf(config.baseUrl)}/account`,
    })
    : undefined;
  const stepForms = createStepForms({
    flow: signInFlow,
    interactions,
    sessions,
    consents: durable.consents,
    source,
    throttle,
    deviceCookies: services.deviceCookies,
    mfa: services.mfa,
    recoveryCodes: services.recoveryCodes,
    change: services.accountChange,
    notices: services.notices,
    passkeys: services.passkeys,
    users,
    changePassword: services.changePassword,
    passwordChanged: createPasswordChanged({ notices: services.notices, endOtherSessions: userSessions.endOtherBrowserSessionsAfterPasswordChange }),
    canonicalAccountName,
    ...(upstream ? { startUpstream: (interaction) => startUpstreamSignIn(upstream, interaction) } : {}),
  });
  const grantsDeps: GrantsDeps & IntrospectionDeps & RevocationDeps = {
    issuer: config.issuer,
    clock,
    keys,
    codes: ephemeral.codes,
    revocations: services.revocations,
    clients,
    users,
    currentUser: (user) => source.currentUser(user),
    refreshTokens: durable.refreshTokens,
    refreshTokenCodec: services.refreshTokenCodec,
    accessTokens: durable.accessTokens,
    refreshLifetime: { idleSeconds: config.refreshTokenIdleLifetime, absoluteSeconds: config.refreshTokenAbsoluteLifetime },
    refreshReuseGraceSeconds: config.refreshTokenReuseGrace,
  };
  const endSession: EndSessionDeps = {
    issuer: config.issuer,
    csrfKey: services.csrfKey,
    clock,
    keys,
    clients,
    users,
    sessions,
    refreshTokens: durable.refreshTokens,
    accessTokens: durable.accessTokens,
    revocations: services.revocations,
    ...(upstream ? { continueUpstream: (idToken: string, trip: SignOutTrip) => upstreamSignOutUrl(upstream, idToken, trip) } : {}),
  };
  return { signInFlow, stepForms, grants: createGrants(grantsDeps), tokenEndpoints: grantsDeps, endSession, upstream, userSessions, recovery };
}
