/**
 * The sign-in flow's edge: the HTTP request as the flow sees it (sessions/sign-in/sign-in-flow.ts
 * BrowserRequest), and its answer (a FlowResult) as HTTP: the cookie, then a page, a redirect
 * or the client's response.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_TTL_SECONDS } from '../../sessions/browser-session.ts';
import type { BrowserRequest, FlowResult } from '../../sessions/sign-in/flow-types.ts';
import { auditOf, type RequestAudit } from './audit.ts';
import { sendClientResponse } from './authorization-response.ts';
import { deviceCookieName, readCookie, readSessionCookie, setDeviceCookie, setSessionCookie } from './cookies.ts';
import type { PageContext } from './pages.ts';
import { renderStepPage, type ForgotPasswordLink } from './step-pages.ts';

/** Of a User-Agent header, what a session keeps: enough to name the browser and system. */
const USER_AGENT_MAX = 400;

export interface FlowAdapterOptions {
  page: PageContext;
  secureCookies: boolean;
  audit: RequestAudit;
  /** The path of IDP_BASE_URL, without a trailing slash. */
  basePath: string;
  /** Where the sign-in page's "Forgot password?" leads, if anywhere. */
  forgotPassword?: ForgotPasswordLink;
}

export function createFlowAdapter({ page, secureCookies, audit, basePath, forgotPassword }: FlowAdapterOptions) {
  // Device cookies go only where passwords and codes are posted.
  const devicePath = `${basePath}/interaction`;
  return {
    browserRequest(request: FastifyRequest): BrowserRequest {
      return {
        sessionId: readSessionCookie(request, secureCookies),
        address: request.ip,
        userAgent: (request.headers['user-agent'] ?? '').slice(0, USER_AGENT_MAX),
        cookie: (name) => readCookie(request, deviceCookieName(name, secureCookies)),
        audit: auditOf(audit, request),
        trust: (target) => {
          request.authorizationTarget = target;
        },
      };
    },

    send(reply: FastifyReply, { outcome, newSessionId, deviceCookie }: FlowResult): FastifyReply {
      if (newSessionId !== undefined) setSessionCookie(reply, newSessionId, { secure: secureCookies, maxAgeSeconds: SESSION_TTL_SECONDS });
      if (deviceCookie !== undefined) setDeviceCookie(reply, deviceCookie, devicePath, secureCookies);
      switch (outcome.kind) {
        case 'error':
          throw outcome.error;
        case 'redirect':
          return reply.header('cache-control', 'no-store').redirect(outcome.location, 303);
        case 'respond-to-client':
          return sendClientResponse(reply, outcome.response);
        case 'show-step':
          return renderStepPage(reply, page, outcome, forgotPassword);
      }
    },
  };
}

export type FlowAdapter = ReturnType<typeof createFlowAdapter>;
