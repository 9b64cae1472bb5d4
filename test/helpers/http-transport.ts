/**
 * How the test helpers speak HTTP: `httpFetch` is fetch, except for origins an in-process app
 * has claimed (test/helpers/in-process.ts), which it answers without a socket. The relying-party
 * helpers and the cookie-jar browser all go through it, so one test body runs unchanged against
 * a spawned `idp serve` (a real port) or against the app in this process (an origin such as
 * http://idp-1a2b.test that exists nowhere on the network).
 */

/** What answers the requests of one origin in process. */
export type OriginHandler = (request: Request) => Promise<Response>;

const inProcess = new Map<string, OriginHandler>();

/** Sends the requests for `origin` to `handler` until the returned function is called. */
export function serveOrigin(origin: string, handler: OriginHandler): () => void {
  const key = new URL(origin).origin;
  if (inProcess.has(key)) throw new Error(`${key} is served in process already`);
  inProcess.set(key, handler);
  return () => void inProcess.delete(key);
}

/** fetch, or the in-process app that claimed the URL's origin. Redirects are never followed in process. */
export function httpFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const handler = inProcess.get(new URL(url).origin);
  return handler ? handler(new Request(url, init)) : fetch(url, init);
}
