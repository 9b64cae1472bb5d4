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
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '169.254.169.254', '[fe80::1]', '10.1.2.3', '100.64.1.1', '[fd00::1]', '0.0.0.0', '[::]']) {
      expect(await urlProblem(`https://${host}/hook`, production, none), host).toMatch(/must not point to/);
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
      expect(await postWebhook({ ...request, url: `https://[::ffff:127.0.0.1]:${port}/hook` }, production)).toMatchObject({ status: null, error: 'refused_address' });
      expect(await postWebhook({ ...request, url: 'http://hooks.example.com/hook' }, production)).toMatchObject({ status: null, error: 'refused_url' });
      expect(requests).toBe(0);
      expect(await postWebhook({ ...request, url: `http://localhost:${port}/hook` }, development)).toMatchObject({ status: 204, error: null });
      expect(requests).toBe(1);
    } finally {
      server.close();
    }
  });
});
