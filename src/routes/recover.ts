/**
 * "Forgot password" (sessions/recovery/recovery-flow.ts): GET and POST /account/recover (the request
 * form; its answer is the code form, whatever was typed), GET and POST /account/recover/code
 * (the code form; GET is what the mailed link opens, and changes nothing).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isRecoveryId } from '../sessions/recovery/password-recovery.ts';
import type { RateLimiter } from '../sessions/rate-limiters.ts';
import type { RecoveryFlow } from '../sessions/recovery/recovery-flow.ts';
import { SESSION_TTL_SECONDS } from '../sessions/browser-session.ts';
import { setSessionCookie } from './shared/cookies.ts';
import type { FlowAdapter } from './shared/flow-adapter.ts';
import { renderPage, type PageContext } from './shared/pages.ts';
import { singleValued } from './shared/params.ts';

export interface RecoverRouteOptions {
  /** Undefined when the service recovers no passwords (no local accounts, or no mail). */
  recovery: RecoveryFlow | undefined;
  adapter: FlowAdapter;
  page: PageContext;
  secureCookies: boolean;
  /** IDP_AUTHORIZE_RATE_LIMIT per source address: requests for a code count against it too. */
  rateLimiter: RateLimiter;
}

const NOT_OFFERED = 'Passwords cannot be reset here. Contact your administrator.';

export async function recoverRoutes(app: FastifyInstance, options: RecoverRouteOptions): Promise<void> {
  const { recovery, adapter, page } = options;
  const config = { page: true };
  const requestAction = `${page.basePath}/account/recover`;
  const codeAction = `${page.basePath}/account/recover/code`;

  const message = (reply: FastifyReply, text: string, status: number) => renderPage(reply, page, 'recover', { message: text }, { status });
  /** "Back to sign in" and "Send a new code": the sign-in page the recovery came from (or the account page's), and the request form again. */
  const waysOut = (interactionId: string | null | undefined) => ({
    signInUrl: interactionId ? `${page.basePath}/interaction/${encodeURIComponent(interactionId)}` : `${page.basePath}/account`,
    newCodeUrl: interactionId ? `${requestAction}?${new URLSearchParams({ interaction: interactionId })}` : requestAction,
  });
  const codeForm = (reply: FastifyReply, fields: { csrfToken: string; recovery: string; interaction?: string | null; code?: string; error?: string }) =>
    renderPage(reply, page, 'recover-code', { action: codeAction, ...fields, ...waysOut(fields.interaction), recovery: isRecoveryId(fields.recovery) ? fields.recovery : '' });

  /** The browser's session for a page's form, with its cookie set when it is new. */
  async function formSession(flow: RecoveryFlow, request: FastifyRequest, reply: FastifyReply) {
    const session = await flow.formSession(adapter.browserRequest(request));
    if (session.newSessionId) setSessionCookie(reply, session.newSessionId, { secure: options.secureCookies, maxAgeSeconds: SESSION_TTL_SECONDS });
    return session;
  }

  app.get('/account/recover', { config }, async (request, reply) => {
    if (!recovery) return message(reply, NOT_OFFERED, 404);
    const session = await formSession(recovery, request, reply);
    // Without a sign-in page of this browser behind it, the recovery ends at the account page.
    const origin = await recovery.originOf(session.loaded, singleValued(request.query).interaction);
    return renderPage(reply, page, 'recover', { action: requestAction, csrfToken: session.csrfToken, interaction: origin.interactionId ?? '', ...waysOut(origin.interactionId) });
  });

  app.post('/account/recover', { config }, async (request, reply) => {
    if (!recovery) return message(reply, NOT_OFFERED, 404);
    // Before anything is read or stored: a flood from one address neither fills the store nor
    // mails account after account.
    await options.rateLimiter.consume(`recover:${request.ip}`);
    const form = singleValued(request.body);
    const answer = await recovery.request(adapter.browserRequest(request), form);
    return codeForm(reply, { csrfToken: form.csrf_token ?? '', recovery: answer.recoveryId, interaction: answer.interactionId });
  });

  app.get('/account/recover/code', { config }, async (request, reply) => {
    if (!recovery) return message(reply, NOT_OFFERED, 404);
    const query = singleValued(request.query);
    const session = await formSession(recovery, request, reply);
    const error = await recovery.linkProblem(query.recovery ?? '');
    const typed = (query.code ?? '').replace('-', '');
    const code = /^\d{8}$/.test(typed) ? typed : undefined;
    return codeForm(reply, { csrfToken: session.csrfToken, recovery: query.recovery ?? '', ...(error ? { error } : { code }) });
  });

  app.post('/account/recover/code', { config }, async (request, reply) => {
    if (!recovery) return message(reply, NOT_OFFERED, 404);
    const form = singleValued(request.body);
    const browser = adapter.browserRequest(request);
    const result = await recovery.enterCode(browser, form);
    if ('error' in result) return codeForm(reply, { csrfToken: form.csrf_token ?? '', recovery: form.recovery ?? '', interaction: form.interaction, error: result.error });
    return adapter.send(reply, result);
  });
}
