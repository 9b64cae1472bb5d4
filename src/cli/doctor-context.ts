/**
 * What the checks of `idp doctor` see: the public URL, the configuration, a clock, fetch and the
 * database. Each check is an async function of this context; the discovery answer is fetched
 * once and shared by the checks that read it.
 */
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DurableStore } from '../store/types.ts';
import type { ServiceFacts } from '../config/facts.ts';
import type { MasterSecrets } from '../tokens/secret-box.ts';

/** `warn`: works now, but a likely mistake; only FAIL fails the command. */
export type CheckStatus = 'ok' | 'FAIL' | 'warn' | 'skip';

/** What one check saw; `fix` says what to change, on a failure. */
export interface Outcome {
  status: CheckStatus;
  detail: string;
  fix?: string;
}

export interface CheckResult extends Outcome {
  name: string;
}

/** The discovery document as the public URL serves it, or why it could not be had. */
export type DiscoveryAnswer =
  | { ok: true; response: Response; document: Record<string, unknown> }
  /** `answered`: an HTTP answer came back (a refusal), rather than none at all. */
  | { ok: false; answered: boolean; detail: string; fix: string };

/** What the running service says it runs with (src/cli/doctor-service.ts), where that came from, or why there is nothing. */
export type ServiceAnswer =
  | { ok: true; from: string; facts: ServiceFacts }
  | { ok: false; from: string | undefined; detail: string };

export interface DoctorContext {
  /** The public URL (`--url` or IDP_BASE_URL), without a trailing slash. */
  url: string;
  config: Config;
  clock: Clock;
  fetch: typeof fetch;
  /** The configured database, opened once; rejects when it cannot be opened. */
  durable(): Promise<DurableStore>;
  /** GET {url}/.well-known/openid-configuration, fetched once. */
  discovery(): Promise<DiscoveryAnswer>;
  /** IDP_SECRET and IDP_SECRET_PREVIOUS; absent, the secret check is skipped. */
  secrets?: () => MasterSecrets;
  /** `--management-url`: where the service's management port is reached (else this environment's). */
  managementUrl?: string | undefined;
  /** What the running service says it runs with (GET /config on its management port), fetched once. */
  service(): Promise<ServiceAnswer>;
}

export interface Check {
  name: string;
  run(context: DoctorContext): Promise<Outcome>;
}

/** "A few seconds": long enough for a slow proxy, short enough for an operator waiting. */
export const HTTP_TIMEOUT_MS = 4000;

export const ok = (detail: string): Outcome => ({ status: 'ok', detail });
export const skip = (detail: string): Outcome => ({ status: 'skip', detail });
export const fail = (detail: string, fix: string): Outcome => ({ status: 'FAIL', detail, fix });
export const warn = (detail: string, fix: string): Outcome => ({ status: 'warn', detail, fix });

/** One GET with a timeout; redirects are reported, not followed (a redirect is itself a finding). */
export function get(context: DoctorContext, url: string): Promise<Response> {
  return context.fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
}

/** The innermost reason: `fetch failed` says less than `connect ECONNREFUSED 127.0.0.1:9`. */
export function describeError(error: unknown): string {
  let e = error;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  if (e instanceof AggregateError && e.errors[0] instanceof Error) e = e.errors[0];
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  if (e.name === 'TimeoutError') return `no answer within ${HTTP_TIMEOUT_MS / 1000} s`;
  // ioredis gives up on a command while it cannot connect; its message is about its own option.
  if (e.name === 'MaxRetriesPerRequestError') return 'no connection (refused, or nothing listens there)';
  // OpenSSL's messages run over several lines of library internals; its code says it in a few words.
  if (typeof code === 'string' && code.startsWith('ERR_SSL_')) return `TLS failed: ${code.slice(8).toLowerCase().replaceAll('_', ' ')}`;
  return e.message.split('\n')[0]?.trim() || (typeof code === 'string' ? code : e.name);
}

export async function fetchDiscovery(context: DoctorContext): Promise<DiscoveryAnswer> {
  const target = `${context.url}/.well-known/openid-configuration`;
  let response: Response;
  try {
    response = await get(context, target);
  } catch (error) {
    const fix = `check that the service runs and that ${new URL(target).host} leads to it (DNS, proxy, firewall), or pass the public URL with --url`;
    return { ok: false, answered: false, detail: `${target} is not reachable: ${describeError(error)}`, fix };
  }
  if (response.status !== 200) return { ok: false, answered: true, ...(await refusal(context, target, response)) };
  const type = response.headers.get('content-type') ?? 'no content type';
  const document = parseObject(await response.text().catch(() => ''));
  if (!document) {
    const fix = 'something else answers at this URL: route it to the service';
    return { ok: false, answered: true, detail: `${target} answered 200 but not a JSON object (${type})`, fix };
  }
  return { ok: true, response, document };
}

/** A non-200 answer: a redirect, or an error; the service's own OAuth error says why it refused. */
async function refusal(context: DoctorContext, target: string, response: Response): Promise<{ detail: string; fix: string }> {
  const location = response.headers.get('location');
  if (location) return { detail: `${target} answered ${response.status} redirecting to ${location}`, fix: 'use the URL it redirects to as --url and as IDP_BASE_URL' };
  const body = parseObject(await response.text().catch(() => ''));
  const said = typeof body?.error === 'string' ? ` (${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''})` : '';
  // The service refuses requests for another host than its base URL's.
  const fix = new URL(context.config.baseUrl).host !== new URL(context.url).host
    ? `set IDP_BASE_URL to the public URL the browser uses (${context.url})`
    : 'route the public URL to the service, passing its Host header (proxy rules; a path prefix belongs in IDP_BASE_URL)';
  return { detail: `${target} answered ${response.status}${said}`, fix };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** What a check that needs the database says when it cannot be opened (the database check names why). */
export async function openOrSkip(context: DoctorContext): Promise<DurableStore | Outcome> {
  try {
    return await context.durable();
  } catch {
    return skip('the database does not answer (see the database check)');
  }
}

export function isOutcome(value: unknown): value is Outcome {
  return typeof value === 'object' && value !== null && 'status' in value && 'detail' in value;
}
