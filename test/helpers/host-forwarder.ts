/**
 * A forwarder that reaches one instance under another host name, as a load balancer does: the
 * instances of one deployment share IDP_BASE_URL and answer only for its host.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HostForwarder {
  url: string;
  close(): Promise<void>;
}

export async function startHostForwarder(targetPort: number, host: string): Promise<HostForwarder> {
  const server = http.createServer((request, response) => {
    const upstream = http.request(
      { host: '127.0.0.1', port: targetPort, method: request.method, path: request.url, headers: { ...request.headers, host } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
