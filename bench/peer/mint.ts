/**
 * Codes and refresh tokens for the peer, through its real authorization flow: every
 * authorization request goes through its interaction (login the first time, consent each time:
 * bench/peer/peer-server.ts), because the peer, following OpenID Connect Core §11, grants
 * `offline_access` only with `prompt=consent`; the code exchange then answers with a refresh
 * token, as the service's does.
 */
import { Browser } from '../../test/helpers/browser-http.ts';
import { authorizePath, exchangeCode, WEB } from '../prepare.ts';

function codeOf(location: string | undefined): string | undefined {
  if (!location?.startsWith(WEB.redirectUri)) return undefined;
  return new URL(location).searchParams.get('code') ?? undefined;
}

/** One code from the browser's session, following the peer's redirects (the interaction too). */
async function authorize(base: string, browser: Browser): Promise<string> {
  let page = await browser.get(`${base}${authorizePath()}&prompt=consent`);
  for (let hops = 0; hops < 10 && !codeOf(page.location); hops++) {
    if (!page.location?.startsWith(base)) break;
    page = await browser.get(page.location);
  }
  const code = codeOf(page.location);
  if (!code) throw new Error(`peer: expected a redirect to the client with a code, got ${page.status} ${page.location ?? page.body.slice(0, 300)}`);
  return code;
}

/**
 * `count` codes, `concurrency` at a time. Each worker is a browser of its own: the interaction
 * cookie is per interaction path, which the test Browser's jar (by name only) would mix up.
 */
export async function peerMintCodes(base: string, count: number, concurrency = 16): Promise<string[]> {
  const codes: string[] = [];
  let started = 0;
  const worker = async () => {
    const browser = new Browser();
    while (started < count) {
      started += 1;
      codes.push(await authorize(base, browser));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return codes;
}

export async function peerRefreshFamilies(base: string, count: number): Promise<string[]> {
  const codes = await peerMintCodes(base, count);
  const tokens = await Promise.all(codes.map((code) => exchangeCode(base, code)));
  return tokens.map((t) => t.refresh_token);
}
