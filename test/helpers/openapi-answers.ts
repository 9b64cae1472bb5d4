/**
 * Every answer the administration API's tests receive, held against the OpenAPI document the
 * service itself serves (`/admin/v1/openapi.json`): the operation of the request's method and path
 * must describe the answer's status, its media type, its ETag, Location and Link headers, and (by
 * the schema there, with ajv) its body.
 * An answer of no operation (an unknown route) must be a problem document. So the document cannot
 * drift from the code without the API's own tests failing.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { httpFetch } from './http-transport.ts';

// A CommonJS module: Node gives its module.exports as the default, the types its `default` member.
const addFormats = formats as unknown as typeof formats.default;
const API_BASE = '/admin/v1';
const DOCUMENT_KEY = 'openapi.json';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document read as JSON
type Json = Record<string, any>;

export interface ReceivedAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body (or the text); undefined when empty. */
  body: unknown;
}

interface Described {
  document: Json;
  validatorAt(pointer: string): ValidateFunction;
}

/** By API base URL: a document is fetched once per service (each in-process app has an origin of its own). */
const described = new Map<string, Promise<Described | undefined>>();

/** RFC 6901 and RFC 3986: a member name as a segment of a URI fragment's JSON pointer. */
const pointerSegment = (name: string) => encodeURIComponent(name.replace(/~/g, '~0').replace(/\//g, '~1'));

async function fetchDescribed(base: string): Promise<Described | undefined> {
  const answer = await httpFetch(`${base}/openapi.json`);
  // The API is not served there (IDP_ADMIN_API off, or on the other port): nothing describes it.
  if (answer.status !== 200) return undefined;
  const document = (await answer.json()) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, DOCUMENT_KEY);
  const validators = new Map<string, ValidateFunction>();
  return {
    document,
    validatorAt(pointer) {
      let validate = validators.get(pointer);
      if (!validate) validators.set(pointer, validate = ajv.compile({ $ref: `${DOCUMENT_KEY}#${pointer}` }));
      return validate;
    },
  };
}

function documentAt(base: string): Promise<Described | undefined> {
  let found = described.get(base);
  if (!found) {
    found = fetchDescribed(base);
    described.set(base, found);
    // Not cached while absent: the API may be switched on there later.
    void found.then((d) => d ?? described.delete(base), () => described.delete(base));
  }
  return found;
}

/** The document's path template that `path` fills (`/users/{id}` for `/users/abc`), literal segments first. */
function templateOf(document: Json, path: string): string | undefined {
  const templates = Object.keys(document.paths as Json);
  const fills = (template: string) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(path);
  return templates.find((t) => t === path) ?? templates.find(fills);
}

function expectValid(at: Described, pointer: string, body: unknown, what: string): void {
  const validate = at.validatorAt(pointer);
  if (!validate(body)) {
    throw new Error(`${what}: the body does not match openapi.json ${pointer}: ${JSON.stringify(validate.errors?.slice(0, 5))}\nbody: ${JSON.stringify(body)?.slice(0, 1000)}`);
  }
}

/** The headers the API sets on success that a client reads: each one sent is described, each one required is sent. */
const DESCRIBED_HEADERS = ['ETag', 'Location', 'Link'];

function expectHeadersDescribed(headers: Headers, described: Json, what: string): void {
  for (const name of DESCRIBED_HEADERS) {
    const sent = headers.has(name);
    if (sent && !(name in described)) throw new Error(`${what} with ${name}, which the document does not describe`);
    if (!sent && described[name]?.required === true) throw new Error(`${what} without ${name}, which the document says it has`);
  }
}

/** Throws when the document the service serves does not describe this answer to `method url`. */
export async function checkAdminAnswer(url: string, method: string, answer: ReceivedAnswer): Promise<void> {
  const { origin, pathname } = new URL(url);
  const at = pathname.indexOf(API_BASE);
  if (at === -1 || method.toUpperCase() === 'HEAD') return;
  const base = `${origin}${pathname.slice(0, at + API_BASE.length)}`;
  const path = pathname.slice(at + API_BASE.length);
  if (path === '/openapi.json') return;
  const found = await documentAt(base);
  if (!found) return;
  const what = `${method} ${path} answered ${answer.status}`;
  const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const template = templateOf(found.document, path);
  const operation = template === undefined ? undefined : (found.document.paths[template] as Json)[method.toLowerCase()] as Json | undefined;
  if (!operation || template === undefined) {
    if (answer.status !== 404 || mediaType !== 'application/problem+json') throw new Error(`${what} (${mediaType}): no operation of openapi.json, so a 404 problem was due`);
    return expectValid(found, '/components/schemas/Problem', answer.body, what);
  }
  // An undescribed status fails, but for the unexpected (5xx) that `default` stands for.
  const status = String(answer.status);
  const key = status in operation.responses ? status : answer.status >= 500 && 'default' in operation.responses ? 'default' : undefined;
  if (key === undefined) throw new Error(`${what}, a status that openapi.json does not give ${method} ${template}`);
  expectHeadersDescribed(answer.headers, (operation.responses[key].headers ?? {}) as Json, `${what} (openapi.json ${method} ${template})`);
  const content = operation.responses[key].content as Json | undefined;
  if (!content) {
    if (answer.body !== undefined) throw new Error(`${what} with a body, where openapi.json describes none`);
    return;
  }
  if (!(mediaType in content)) throw new Error(`${what} in ${mediaType || 'no media type'}, where openapi.json says ${Object.keys(content).join(', ')}`);
  const pointer = ['paths', template, method.toLowerCase(), 'responses', key, 'content', mediaType, 'schema'].map(pointerSegment).join('/');
  expectValid(found, `/${pointer}`, answer.body, what);
}
