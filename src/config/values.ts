/** How each kind of value in the environment is read: one zod schema per kind, each message naming only the problem. */
import { isIP } from 'node:net';
import { z } from 'zod';
import { parseRedisUrl, RedisUrlError } from '../store/ephemeral/redis-url.ts';

/** localhost, 127.0.0.0/8 or ::1, as URL.hostname writes them (or without the brackets). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

export function integerIn<F extends number | undefined>(min: number, max: number, fallback: F) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });
}

export const baseUrl = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    const raw = v.trim();
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' });
      return z.NEVER;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      ctx.addIssue({ code: 'custom', message: 'must use http or https' });
      return z.NEVER;
    }
    if (url.search || url.hash || url.username || url.password) {
      ctx.addIssue({ code: 'custom', message: 'must not carry a query, a fragment or credentials' });
      return z.NEVER;
    }
    return url.href.replace(/\/+$/, '');
  });


export function urlWithSchemes(schemes: string[]) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      try {
        const url = new URL(v.trim());
        if (!schemes.includes(url.protocol)) throw new Error('scheme');
        return v.trim();
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}` });
        return z.NEVER;
      }
    });
}

/** An address, a CIDR range, or a name the proxy-addr module knows (loopback, linklocal, uniquelocal). */
function isProxyAddress(text: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(text)) return true;
  const [address = '', bits, extra] = text.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}


/** IDP_TRUST_PROXY: true, false, a number of proxies, or addresses and CIDR ranges. */
export const trustProxy = optionalText.transform((v, ctx): boolean | number | string => {
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return Number(v);
  const wrong = v.split(',').map((a) => a.trim()).find((a) => !isProxyAddress(a));
  if (wrong !== undefined) {
    ctx.addIssue({ code: 'custom', message: `must be true, false, a number of proxies, or addresses and CIDR ranges separated by commas ("${wrong}" is none of these)` });
    return z.NEVER;
  }
  return v;
});

/** Every form the README documents, read by the parser the store connects with. */
export const redisUrl = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return undefined;
    try {
      parseRedisUrl(v.trim());
      return v.trim();
    } catch (error) {
      const why = error instanceof RedisUrlError ? error.message : 'is not a Redis URL';
      ctx.addIssue({ code: 'custom', message: `must be a URL starting with redis://, rediss://, redis+sentinel:// or redis+cluster:// (${why})` });
      return z.NEVER;
    }
  });

export const flag = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '' || v === '0' || v === 'false') return false;
    if (v === '1' || v === 'true') return true;
    ctx.addIssue({ code: 'custom', message: 'must be 1 or 0' });
    return z.NEVER;
  });

/** One label or more, dot-separated, of letters, digits, `-` and `_` (container names may have `_`). */
const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

/** Comma-separated host names without port or scheme, in lower case; none when unset. */
export const hostNames = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const names = (v ?? '').split(',').map((n) => n.trim().toLowerCase()).filter((n) => n !== '');
    const wrong = names.find((n) => !HOST_NAME.test(n));
    if (wrong !== undefined) {
      ctx.addIssue({ code: 'custom', message: `must be host names separated by commas, without port or scheme (${wrong} is not one)` });
      return z.NEVER;
    }
    return names;
  });

/** The image types a logo may be, by file extension, and the Content-Type each is served with. */
export const LOGO_TYPES: Record<string, string> = {
  png: 'image/png',
  svg: 'image/svg+xml',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
};

export const brandLogo = optionalText.transform((v, ctx) => {
  if (v === undefined) return undefined;
  const contentType = LOGO_TYPES[/\.([a-z]+)$/i.exec(v)?.[1]?.toLowerCase() ?? ''];
  if (!contentType) {
    ctx.addIssue({ code: 'custom', message: 'must be the path of a .png, .svg, .jpg or .webp file' });
    return z.NEVER;
  }
  return { path: v, contentType };
});

/** `#rgb` or `#rrggbb`, kept as `#rrggbb` so the contrast can be computed from it. */
export const brandColor = optionalText.transform((v, ctx) => {
  if (v === undefined) return undefined;
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(v)?.[1]?.toLowerCase();
  if (!hex) {
    ctx.addIssue({ code: 'custom', message: 'must be a colour written #rgb or #rrggbb' });
    return z.NEVER;
  }
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`;
});

export const brandName = optionalText.refine((v) => v === undefined || (v.length <= 60 && !/\p{Cc}/u.test(v)), {
  message: 'must be at most 60 characters, without control characters',
});

export const onOff = (fallback: boolean) => z
  .string()
  .optional()
  .transform((v, ctx) => {
    const value = v?.trim().toLowerCase();
    if (value === undefined || value === '') return fallback;
    if (value === 'on' || value === '1' || value === 'true') return true;
    if (value === 'off' || value === '0' || value === 'false') return false;
    ctx.addIssue({ code: 'custom', message: 'must be on or off' });
    return z.NEVER;
  });

/** `10.1.2.0/24` or `fd00::/8`, or one address (a range of one). */
function isCidr(text: string): boolean {
  const [address = '', bits, extra] = text.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/** Comma-separated CIDR ranges (IDP_WEBHOOK_ALLOWED_NETWORKS); none when unset. */
export const cidrList = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const ranges = (v ?? '').split(',').map((r) => r.trim()).filter((r) => r !== '');
    const wrong = ranges.find((r) => !isCidr(r));
    if (wrong !== undefined) {
      ctx.addIssue({ code: 'custom', message: `must be CIDR ranges separated by commas (${wrong} is not one)` });
      return z.NEVER;
    }
    return ranges;
  });

/** A decimal number from `min` to `max` (`0.001`, `1`, `2.5`). */
export function decimalIn(min: number, max: number, fallback: number) {
  return optionalText.transform((v, ctx) => {
    if (v === undefined) return fallback;
    const n = /^\d+(\.\d+)?$/.test(v) ? Number(v) : Number.NaN;
    if (!(n >= min && n <= max)) {
      ctx.addIssue({ code: 'custom', message: `must be a number from ${min} to ${max}` });
      return z.NEVER;
    }
    return n;
  });
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** A duration: whole seconds, or a number with a unit (`90d`, `12h`, `30m`, `45s`), at most `max` seconds. */
export function durationIn(max: number, fallback: number) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return fallback;
      const match = /^(\d{1,10})([smhd]?)$/.exec(v.trim());
      const seconds = match ? Number(match[1]) * (DURATION_UNITS[match[2] || 's'] ?? 1) : Number.NaN;
      if (!(seconds <= max)) {
        ctx.addIssue({ code: 'custom', message: `must be a duration of at most ${max / 86400} days: seconds, or a number followed by s, m, h or d (90d)` });
        return z.NEVER;
      }
      return seconds;
    });
}

/** Comma-separated names: `fallback` when unset, none when set empty. */
export function nameList(fallback: readonly string[]) {
  return z
    .string()
    .optional()
    .transform((v) => (v === undefined ? [...fallback] : v.split(',').map((name) => name.trim()).filter((name) => name !== '')));
}
