/**
 * No server-side request forgery through a webhook URL: in production every address of the
 * refused list is refused, in every form, at creation (the admin rule) and at delivery (the
 * request itself, resolving the name), unless IDP_WEBHOOK_ALLOWED_NETWORKS allows it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { urlProblem } from '../../../src/admin/webhook-rules.ts';
import { createAddressPolicy } from '../../../src/events/addresses.ts';
import { postWebhook } from '../../../src/events/webhook-request.ts';

const production = createAddressPolicy({ production: true, allowedNetworks: [] });
const development = createAddressPolicy({ production: false, allowedNetworks: [] });

/** Loopback, RFC 1918, RFC 4193, link-local (metadata), CGNAT, unspecified, and IPv4-mapped IPv6 forms of them. */
const REFUSED = [
  '127.0.0.1', '127.255.255.254', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1',
  '169.254.169.254', '169.254.0.1', '100.64.0.1', '100.127.255.254', '0.0.0.0', '0.1.2.3',
  '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'febf::1', 'ff02::1',
  '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:10.0.0.1', '::ffff:a9fe:a9fe', '::ffff:192.168.0.1', '::ffff:100.64.0.1', '::ffff:0.0.0.0',
  '::127.0.0.1', '224.0.0.1', '255.255.255.255',
];
const PUBLIC = ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8'];

describe('webhook address policy', () => {
  it('refuses every address of the list in production, and permits public ones', () => {
    expect(REFUSED.filter((a) => production.permits(a))).toStrictEqual([]);
    expect(PUBLIC.filter((a) => !production.permits(a))).toStrictEqual([]);
  });

  // A decision table: an IPv6 form that carries an IPv4 address goes where that address is.
  const EMBEDDED: ReadonlyArray<readonly [address: string, production: boolean, why: string]> = [
    ['64:ff9b::7f00:1', false, 'NAT64 (RFC 6052) of 127.0.0.1'],
    ['64:ff9b::10.0.0.1', false, 'NAT64 of 10.0.0.1, dotted'],
    ['64:ff9b::a9fe:a9fe', false, 'NAT64 of the metadata address'],
    ['64:ff9b::808:808', true, 'NAT64 of 8.8.8.8'],
    ['64:ff9b:1::7f00:1', false, 'local-use NAT64 (RFC 8215) of 127.0.0.1 at /96'],
    ['64:ff9b:1:7f00:0:100::', false, 'local-use NAT64 of 127.0.0.1 at /48'],
    ['::ffff:0:127.0.0.1', false, 'IPv4-translated (RFC 2765) 127.0.0.1'],
    ['::ffff:0:a00:1', false, 'IPv4-translated 10.0.0.1'],
    ['::ffff:0:808:808', true, 'IPv4-translated 8.8.8.8'],
    ['2002:7f00:1::', false, '6to4 (RFC 3056) of 127.0.0.1'],
    ['2002:c0a8:101::1', false, '6to4 of 192.168.1.1'],
    ['2002:808:808::1', true, '6to4 of 8.8.8.8'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', false, 'Teredo (RFC 4380) client 127.0.0.1 (inverted)'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', false, 'Teredo client 10.0.0.1'],
    ['2001:0:7f00:1:8000:63bf:3fff:fdd2', false, 'Teredo server 127.0.0.1'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true, 'Teredo client 8.8.8.8, server 65.54.227.120'],
    ['fec0::1', false, 'site-local (RFC 3879)'],
    ['feff::1', false, 'site-local, top of fec0::/10'],
    ['100::1', false, 'discard-only (RFC 6666)'],
    ['100:0:0:1::1', true, 'past 100::/64'],
    ['2001:db8:1::1', true, 'a plain global IPv6 address'],
  ];

  it('judges an IPv6 address by the IPv4 address it carries (NAT64, translated, 6to4, Teredo), and refuses site-local and discard-only', () => {
    expect(EMBEDDED.filter(([address, permitted]) => production.permits(address) !== permitted).map(([address, , why]) => `${address}: ${why}`)).toStrictEqual([]);
    // Outside production loopback behind NAT64 is as allowed as 127.0.0.1 itself; a private address is not.
    expect([development.permits('64:ff9b::7f00:1'), development.permits('64:ff9b::a00:1')]).toStrictEqual([true, false]);
    // IDP_WEBHOOK_ALLOWED_NETWORKS overrides, by the IPv6 range or by the IPv4 range carried.
    const allowed = createAddressPolicy({ production: true, allowedNetworks: ['64:ff9b::/96', '10.20.0.0/16'] });
    expect(['64:ff9b::7f00:1', '2002:a14:1::1'].every((a) => allowed.permits(a))).toBe(true);
    expect(allowed.permits('2002:a15:1::1')).toBe(false);
  });

  it('allows loopback outside production only, never the rest', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].every((a) => development.permits(a))).toBe(true);
    expect(REFUSED.filter((a) => !a.includes('127.') && a !== '::1' && a !== '::ffff:7f00:1' && development.permits(a))).toStrictEqual([]);
  });

  it('permits what IDP_WEBHOOK_ALLOWED_NETWORKS lists, and nothing next to it', () => {
    const allowed = createAddressPolicy({ production: true, allowedNetworks: ['10.20.0.0/16', 'fd12:3456::/32', '169.254.169.254'] });
    expect(['10.20.1.2', '::ffff:10.20.9.9', 'fd12:3456::7', '169.254.169.254'].every((a) => allowed.permits(a))).toBe(true);
    expect(['10.21.0.1', 'fd12:3457::1', '169.254.169.253', '127.0.0.1'].some((a) => allowed.permits(a))).toBe(false);
  });

  it('demands https in production, and refuses address literals of the list in a URL', async () => {
    const none = async () => [];
    expect(await urlProblem('http://hooks.example.com/x', production, none)).toMatch(/https/);
    expect(await urlProblem('https://hooks.example.com/x', production, none)).toBeUndefined();
    expect(await urlProblem('http://127.0.0.1:8080/x', development, none)).toBeUndefined();
    for (const host of ['[64:ff9b::7f00:1]', '[::ffff:0:127.0.0.1]', '[2002:7f00:1::]', '[fec0::1]', '127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '169.254.169.254', '[fe80::1]', '10.1.2.3', '100.64.1.1', '[fd00::1]', '0.0.0.0', '[::]']) {
      expect(await urlProblem(`https://${host}/hook`, production, none), host).toMatch(/must not point to/);
    }
  });

  it('refuses control characters in a URL (the parser would drop a tab or a line break silently)', async () => {
    const none = async () => [];
    for (const url of ['https://hooks.example.com/a\nb', 'https://hooks.example.com/\tx', 'https://hooks.exa\rmple.com/', 'https://hooks.example.com/\u202ex']) {
      expect(await urlProblem(url, production, none), JSON.stringify(url)).toMatch(/control characters/);
    }
  });

  it('refuses at creation a name that resolves to a refused address (localhost)', async () => {
    const problem = await urlProblem('https://localhost/hook', production, async (host) => (await import('node:dns/promises')).lookup(host, { all: true }).then((r) => r.map((a) => a.address)));
    expect(problem).toMatch(/localhost: it resolves to .*127\.0\.0\.1|::1/);
  });

  it('refuses at delivery a name that resolves to loopback, without connecting, and connects outside production', async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const request = { body: '{}', headers: {} };
      expect(await postWebhook({ ...request, url: `https://localhost:${port}/hook` }, production)).toMatchObject({ status: null, error: 'refused_address' });
      expect(await postWebhook({ ...request, url: `https://127.0.0.1:${port}/hook` }, production)).toMatchObject({ status: null, error: 'refused_address' });
      for (const host of ['[::ffff:127.0.0.1]', '[64:ff9b::7f00:1]', '[::ffff:0:127.0.0.1]', '[2002:7f00:1::]', '[fec0::1]']) {
        expect(await postWebhook({ ...request, url: `https://${host}:${port}/hook` }, production), host).toMatchObject({ status: null, error: 'refused_address' });
      }
      expect(await postWebhook({ ...request, url: 'http://hooks.example.com/hook' }, production)).toMatchObject({ status: null, error: 'refused_url' });
      expect(requests).toBe(0);
      expect(await postWebhook({ ...request, url: `http://localhost:${port}/hook` }, development)).toMatchObject({ status: 204, error: null });
      expect(requests).toBe(1);
    } finally {
      server.close();
    }
  });
});
