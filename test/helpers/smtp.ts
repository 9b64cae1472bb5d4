/**
 * A real SMTP server on loopback (the smtp-server package) that keeps every message it is given,
 * decoded: what a user's mailbox would show. For tests of anything the service mails:
 *
 *   const mail = await startSmtpServer();
 *   ... start the service with IDP_SMTP_URL: mail.url ...
 *   const message = await mail.waitForMessage((m) => m.to === 'ann@example.com');
 *   const code = codeIn(message);
 */
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { parseMessage } from './mime.ts';
import { tempDir } from './process.ts';
import { HANG_LIMIT_MS } from './waits.ts';

export interface CapturedMail {
  /** The From header, as written (`Name <address>` or an address). */
  from: string;
  /** The envelope's recipients, comma-separated (the service sends each message to one). */
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Map<string, string>;
  /** Whether the message came over TLS (STARTTLS), and the user it signed in as. */
  tls: boolean;
  user: string | undefined;
}

export interface SmtpServerOptions {
  /** Offer STARTTLS with this key and certificate (PEM; see selfSignedCertificate). Default: not offered. */
  tls?: { key: string; cert: string };
  /** Demand AUTH with these credentials; a wrong password is refused with 535. */
  auth?: { user: string; pass: string };
  /** 'refuse': every recipient is refused (550); 'hang': the server never greets. Default 'accept'. */
  behaviour?: 'accept' | 'refuse' | 'hang';
  /** The address to listen on; default 127.0.0.1 (a test of what production demands off loopback gives another). */
  host?: string;
}

export interface SmtpCatcher {
  host: string;
  port: number;
  /** `smtp://[user:pass@]127.0.0.1:PORT`, for IDP_SMTP_URL. */
  url: string;
  /** Every message received so far, in order. */
  messages: CapturedMail[];
  /** Connections opened, and failed AUTH attempts (with the password tried never kept). */
  connections(): number;
  authFailures(): number;
  /** The first message (received already or to come) `matches` holds for; ends when it arrives. */
  waitForMessage(matches?: (mail: CapturedMail) => boolean, what?: string): Promise<CapturedMail>;
  close(): Promise<void>;
}

export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<SmtpCatcher> {
  const messages: CapturedMail[] = [];
  const events = new EventEmitter();
  let connections = 0;
  let authFailures = 0;
  const { auth, tls, behaviour = 'accept', host = '127.0.0.1' } = options;
  const server = new SMTPServer({
    logger: false,
    // close() cuts what is left after a second (a client waiting for a greeting that never comes).
    closeTimeout: 1000,
    ...(tls ? { key: tls.key, cert: tls.cert } : { disabledCommands: ['STARTTLS'] }),
    ...(auth ? { allowInsecureAuth: true } : { authOptional: true, disabledCommands: tls ? ['AUTH'] : ['STARTTLS', 'AUTH'] }),
    onConnect(_session, callback) {
      connections++;
      if (behaviour !== 'hang') callback();
    },
    onAuth(login, _session, callback) {
      if (auth && login.username === auth.user && login.password === auth.pass) return callback(null, { user: login.username });
      authFailures++;
      callback(Object.assign(new Error('Authentication failed'), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, callback) {
      callback(behaviour === 'refuse' ? Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 }) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const parsed = parseMessage(Buffer.concat(chunks));
        const mail: CapturedMail = {
          from: parsed.headers.get('from') ?? '',
          to: session.envelope.rcptTo.map((r) => r.address).join(', '),
          subject: parsed.headers.get('subject') ?? '',
          text: parsed.text,
          html: parsed.html,
          headers: parsed.headers,
          tls: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
        };
        messages.push(mail);
        events.emit('message', mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  // A client that goes away mid-conversation is no failure of the test.
  server.on('error', () => {});
  const { port } = server.server.address() as AddressInfo;
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
  return {
    host,
    port,
    url: `smtp://${credentials}${host.includes(':') ? `[${host}]` : host}:${port}`,
    messages,
    connections: () => connections,
    authFailures: () => authFailures,
    waitForMessage: (matches = () => true, what = 'a message') => waitForMessage(messages, events, matches, what),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function waitForMessage(messages: CapturedMail[], events: EventEmitter, matches: (mail: CapturedMail) => boolean, what: string): Promise<CapturedMail> {
  const already = messages.find(matches);
  if (already) return Promise.resolve(already);
  return new Promise((resolve, reject) => {
    const onMessage = (mail: CapturedMail) => {
      if (!matches(mail)) return;
      clearTimeout(timer);
      events.off('message', onMessage);
      resolve(mail);
    };
    // The safety net for a hang, as every wait of the suite has (waits.ts).
    const timer = setTimeout(() => {
      events.off('message', onMessage);
      const seen = messages.map((m) => `${m.to}: ${m.subject}`).join('; ') || 'none';
      reject(new Error(`${what}: none arrived within ${HANG_LIMIT_MS} ms (the limit for a hang); received: ${seen}`));
    }, HANG_LIMIT_MS);
    events.on('message', onMessage);
  });
}

/** The one-time code of a message: the only run of 8 digits in its text. */
export function codeIn(mail: CapturedMail): string {
  const codes = mail.text.match(/(?<!\d)\d{8}(?!\d)/g) ?? [];
  if (codes.length !== 1) throw new Error(`expected one run of 8 digits in "${mail.subject}", found ${codes.length}`);
  return codes[0] as string;
}

/** The http(s) links of a message's text, in order. */
export function linksIn(mail: CapturedMail): string[] {
  return mail.text.match(/https?:\/\/[^\s<>"]+/g) ?? [];
}

/** A self-signed certificate for 127.0.0.1 and localhost (openssl), to offer STARTTLS with and to trust as a CA. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const dir = tempDir('idp-smtp-cert-');
  try {
    const key = join(dir.path, 'key.pem');
    const cert = join(dir.path, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert,
      '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    dir.remove();
  }
}
