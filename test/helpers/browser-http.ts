/**
 * A minimal browser over fetch for protocol tests: a cookie jar, manual redirects, and form
 * reading, so a test can walk the sign-in pages the way a browser without JavaScript would.
 * It speaks through httpFetch: to a spawned server, or to an app in this process.
 */
import { httpFetch } from './http-transport.ts';

export interface Page {
  status: number;
  url: string;
  location: string | undefined;
  headers: Headers;
  body: string;
}

export interface FormFields {
  action: string;
  fields: Record<string, string>;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#x27;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The first form's action and its hidden inputs. */
export function readForm(html: string, baseUrl: string): FormFields {
  const form = /<form[^>]*action="([^"]*)"/i.exec(html);
  if (!form?.[1]) throw new Error(`no form in page: ${html.slice(0, 500)}`);
  const fields: Record<string, string> = {};
  for (const input of html.matchAll(/<input[^>]*>/gi)) {
    const tag = input[0];
    if (!/type="hidden"/i.test(tag)) continue;
    const name = /name="([^"]*)"/i.exec(tag)?.[1];
    const value = /value="([^"]*)"/i.exec(tag)?.[1] ?? '';
    if (name) fields[decodeEntities(name)] = decodeEntities(value);
  }
  return { action: new URL(decodeEntities(form[1]), baseUrl).href, fields };
}

export class Browser {
  readonly cookies = new Map<string, string>();

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (!pair || eq < 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(url: string, init: RequestInit = {}): Promise<Page> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', this.cookieHeader());
    const res = await httpFetch(url, { ...init, headers, redirect: 'manual' });
    this.remember(res.headers);
    const location = res.headers.get('location') ?? undefined;
    return { status: res.status, url, location: location ? new URL(location, url).href : undefined, headers: res.headers, body: await res.text() };
  }

  get(url: string): Promise<Page> {
    return this.request(url);
  }

  post(url: string, form: Record<string, string>): Promise<Page> {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }

  /** Follows redirects that stay on `origin`; stops at the first page or at a redirect elsewhere. */
  async follow(page: Page, origin: string): Promise<Page> {
    let current = page;
    for (let hops = 0; hops < 10 && current.location?.startsWith(origin); hops++) {
      current = await this.get(current.location);
    }
    return current;
  }
}
