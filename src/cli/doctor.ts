/**
 * `idp doctor [--url URL]`: checks a deployment from outside, the way an operator debugs a
 * provider behind a reverse proxy. One line per check (`ok`, `FAIL` with what to fix, or `skip`
 * with why); exit 1 when any check failed. The public URL is `--url`, else IDP_BASE_URL. What the
 * service runs with comes from its management port (`--management-url`, else IDP_MANAGEMENT_PORT),
 * when it answers; else the checks judge by this environment.
 */
import type { DurableStore } from '../store/types.ts';
import { parseCommand } from './args.ts';
import { masterSecrets, UsageError, type CliContext, type ExitCode } from './context.ts';
import { checkCookies } from './doctor-cookies.ts';
import { describeError, fail, fetchDiscovery, type Check, type CheckResult, type DiscoveryAnswer, type DoctorContext, type ServiceAnswer } from './doctor-context.ts';
import { checkChangeFeed, checkClock, checkDatabase, checkForwarded, checkSignInSource, checkStore } from './doctor-infrastructure.ts';
import { checkDiscovery, checkHsts, checkIssuer, checkJwks } from './doctor-http.ts';
import { checkMail } from './doctor-mail.ts';
import { checkService, fetchServiceFacts } from './doctor-service.ts';
import { checkSecret } from './doctor-secret.ts';
import { report } from './output.ts';

/** In the order they print. Each is an async function of a DoctorContext, so tests can inject one. */
export const CHECKS: readonly Check[] = [
  { name: 'discovery', run: checkDiscovery },
  { name: 'service', run: checkService },
  { name: 'issuer', run: checkIssuer },
  { name: 'jwks', run: checkJwks },
  { name: 'https', run: checkHsts },
  { name: 'cookies', run: checkCookies },
  { name: 'forwarded', run: checkForwarded },
  { name: 'clock', run: checkClock },
  { name: 'database', run: checkDatabase },
  { name: 'secret', run: checkSecret },
  { name: 'change feed', run: checkChangeFeed },
  { name: 'store', run: checkStore },
  { name: 'sign-in source', run: checkSignInSource },
  { name: 'mail', run: checkMail },
];

/** A check that hangs (a database host that drops packets) fails after this instead of hanging the command. */
const CHECK_DEADLINE_MS = 10_000;

export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
}

export interface DoctorOptions {
  checks?: readonly Check[];
  fetch?: typeof fetch;
  /** `--management-url`. */
  managementUrl?: string | undefined;
}

/** Runs every check against the public URL `url`; prints nothing. */
export async function runDoctor(context: CliContext, url: string, options: DoctorOptions = {}): Promise<DoctorReport> {
  const { checks = CHECKS, fetch = globalThis.fetch } = options;
  let durable: Promise<DurableStore> | undefined;
  let discovery: Promise<DiscoveryAnswer> | undefined;
  let service: Promise<ServiceAnswer> | undefined;
  const doctor: DoctorContext = {
    url: absoluteUrl(url, '--url'),
    config: context.config,
    clock: context.clock,
    fetch,
    durable: () => (durable ??= context.openDurable()),
    discovery: () => (discovery ??= fetchDiscovery(doctor)),
    secrets: () => masterSecrets(context),
    managementUrl: options.managementUrl === undefined ? undefined : absoluteUrl(options.managementUrl, '--management-url'),
    service: () => (service ??= fetchServiceFacts(doctor)),
  };
  // Side by side: the checks share the discovery answer and the database, and a slow one
  // delays the report only by its own deadline.
  const results = await Promise.all(checks.map((check) => runCheck(check, doctor)));
  return { ok: results.every((r) => r.status !== 'FAIL'), checks: results };
}

async function runCheck(check: Check, context: DoctorContext): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ name: check.name, ...fail(`no result within ${CHECK_DEADLINE_MS / 1000} s`, 'see the other checks for what does not answer') }), CHECK_DEADLINE_MS);
  });
  const result = check.run(context).then(
    (outcome) => ({ name: check.name, ...outcome }),
    (error: unknown) => ({ name: check.name, ...fail(`the check itself failed: ${describeError(error)}`, 'report this as a bug of idp doctor') }),
  );
  try {
    return await Promise.race([result, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const USAGE = 'idp doctor [--url URL] [--management-url URL]';

/** The URL as IDP_BASE_URL is normalised: absolute http(s), no query or fragment, no trailing slash. */
function absoluteUrl(raw: string, option: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${option} "${raw}": must be an absolute http or https URL (usage: ${USAGE})`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new UsageError(`${option} "${raw}": must be an http or https URL without a query, a fragment or credentials (usage: ${USAGE})`);
  }
  return url.href.replace(/\/+$/, '');
}

function formatLine(result: CheckResult, width: number): string {
  const line = `${result.status.padEnd(4)}  ${result.name.padEnd(width)}  ${result.detail}`;
  return result.fix ? `${line}; fix: ${result.fix}` : line;
}

export async function doctorCommand(args: string[], context: CliContext): Promise<ExitCode> {
  const { values } = parseCommand({ usage: USAGE, options: { url: { type: 'string' }, 'management-url': { type: 'string' } }, positionals: [] }, args);
  const result = await runDoctor(context, values.url ?? context.config.baseUrl, { managementUrl: values['management-url'] });
  const width = Math.max(...result.checks.map((c) => c.name.length));
  report(context, result, () => result.checks.map((check) => formatLine(check, width)));
  return result.ok ? 0 : 1;
}
