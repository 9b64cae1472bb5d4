/**
 * What the running service says it runs with (GET /config on its management port, no secret in
 * it): `idp doctor` judges the service's mail, http and database by it rather than by its own
 * environment, which may lack them (an operator's shell without IDP_SMTP_URL).
 */
import { readServiceFacts, type ServiceFacts } from '../config/facts.ts';
import { describeError, get, ok, skip, warn, type DoctorContext, type Outcome, type ServiceAnswer } from './doctor-context.ts';

const WILDCARD = new Set(['0.0.0.0', '::']);

/** `--management-url`, else the management port of this environment (IDP_MANAGEMENT_PORT and _HOST); undefined without either. */
export function managementUrl(context: Pick<DoctorContext, 'config' | 'managementUrl'>): string | undefined {
  if (context.managementUrl !== undefined) return context.managementUrl.replace(/\/+$/, '');
  const management = context.config.management;
  if (!management) return undefined;
  const host = WILDCARD.has(management.host) ? '127.0.0.1' : management.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${management.port}`;
}

export async function fetchServiceFacts(context: DoctorContext): Promise<ServiceAnswer> {
  const base = managementUrl(context);
  if (base === undefined) return { ok: false, from: undefined, detail: 'no management port to ask (IDP_MANAGEMENT_PORT unset here, no --management-url)' };
  const from = `${base}/config`;
  try {
    const response = await get(context, from);
    const facts = response.status === 200 ? readServiceFacts(await response.json().catch(() => undefined)) : undefined;
    if (facts) return { ok: true, from, facts };
    return { ok: false, from, detail: `${from} answered ${response.status}${response.status === 200 ? ' but not what idp serves there' : ''}` };
  } catch (error) {
    return { ok: false, from, detail: `${from} does not answer: ${describeError(error)}` };
  }
}

/** The facts when the service told them, else undefined (the checks then judge by this environment). */
export async function serviceFactsOf(context: DoctorContext): Promise<ServiceFacts | undefined> {
  const answer = await context.service();
  return answer.ok ? answer.facts : undefined;
}

/** The first line a reader needs: whose configuration the other checks judge. */
export async function checkService(context: DoctorContext): Promise<Outcome> {
  const answer = await context.service();
  if (!answer.ok) {
    const rest = 'the checks judge by this environment';
    if (answer.from === undefined) return skip(`${answer.detail}: ${rest}`);
    return warn(`${answer.detail}: ${rest}`, 'pass the management port with --management-url (http://host:port), or run idp doctor with the service\'s IDP_MANAGEMENT_PORT and IDP_MANAGEMENT_HOST');
  }
  const { facts } = answer;
  const mail = facts.mail.server ?? 'no mail server';
  return ok(`${answer.from}: ${facts.mode}, version ${facts.versions.service} (Node.js ${facts.versions.node}), database ${facts.database.where}, `
    + `store ${facts.store.where}, mail ${mail}, sign-in source ${facts.sign_in_source}, admin API ${facts.admin_api}`);
}

/** Said when this environment's setting is not the running service's: the check judged the wrong one. */
export function notTheService(what: string, here: string, service: string, variable: string): Outcome {
  return warn(`this environment's ${what} (${here}) is not the service's (${service}, as the service says)`, `run idp doctor with the service's ${variable}`);
}
