/**
 * The WebAuthn relying party: passkeys are bound to a domain, the host of IDP_BASE_URL or a
 * parent domain of it named by IDP_WEBAUTHN_RP_ID (so that passkeys outlive a move from
 * id.example.com to login.example.com). Browsers refuse any other: a sibling, a public suffix,
 * an IP address.
 */
import { isIP } from 'node:net';

/** The host of a base URL, in lower case, without port (an IPv6 address without brackets). */
export function baseUrlHost(baseUrl: string): string {
  return new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/**
 * Why `rpId` cannot be the relying party id for `host`, or undefined when it can: it must be the
 * host itself, or a parent domain of it of at least two labels (`example.com`, never `com`). A
 * label-count rule, not the public suffix list: a parent such as `co.uk` passes here and fails
 * in the browser.
 */
export function rpIdProblem(host: string, rpId: string): string | undefined {
  const id = rpId.toLowerCase();
  if (id === host) return undefined;
  if (isIP(host) !== 0) return `must be ${host} (the host of IDP_BASE_URL): an IP address has no parent domain`;
  if (!/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(id)) {
    return `must be a domain name, the host of IDP_BASE_URL (${host}) or a parent domain of it`;
  }
  if (!host.endsWith(`.${id}`)) return `must be the host of IDP_BASE_URL (${host}) or a parent domain of it`;
  return undefined;
}
