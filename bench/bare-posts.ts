/**
 * A bare webhook request's cost to its sender: `node bench/bare-posts.ts URL COUNT CONCURRENCY`
 * posts COUNT bodies the size of a `token_issued` event, with Standard Webhooks' headers, over
 * keep-alive HTTPS connections (the receiver's certificate trusted through NODE_EXTRA_CA_CERTS),
 * and prints its own CPU per request in ms as JSON. No outbox, no database: the floor under what
 * an instance spends to deliver an event (bench/webhooks.ts).
 */
import { createHmac, randomBytes } from 'node:crypto';
import https from 'node:https';

const [url = '', count = '2000', concurrency = '16'] = process.argv.slice(2);
const total = Number(count);
const agent = new https.Agent({ keepAlive: true, maxSockets: Number(concurrency) });
const key = randomBytes(32);
const data = { grant: 'authorization_code', client_id: 'bench-web', user_id: `usr_${randomBytes(12).toString('base64url')}`, refresh: true };

function post(): Promise<void> {
  const id = `evt_${randomBytes(16).toString('base64url')}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ type: 'token_issued', timestamp: new Date().toISOString(), data });
  const signature = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      method: 'POST', agent,
      headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => res.resume().on('end', () => resolve()));
    req.on('error', reject);
    req.end(body);
  });
}

let sent = 0;
const worker = async () => {
  while (sent < total) {
    sent++;
    await post();
  }
};
// The first connections' handshakes are not what an event costs: warm up, then measure.
await Promise.all(Array.from({ length: Number(concurrency) }, () => post()));
const before = process.cpuUsage();
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const used = process.cpuUsage(before);
console.log(JSON.stringify({ cpuMsPerRequest: (used.user + used.system) / 1000 / total }));
agent.destroy();
