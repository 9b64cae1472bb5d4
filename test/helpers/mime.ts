/**
 * A small MIME reader for the messages the test SMTP server receives: headers (folded, with
 * encoded words), multipart bodies however nested, quoted-printable and base64, any charset
 * TextDecoder knows. Enough for what the service sends; no attachments are read.
 */

export interface ParsedMessage {
  /** Header names in lower case, values unfolded and decoded. */
  headers: Map<string, string>;
  /** The first text/plain part ('' when there is none). */
  text: string;
  /** The first text/html part ('' when there is none). */
  html: string;
}

export function parseMessage(raw: Buffer): ParsedMessage {
  const found: ParsedMessage = { headers: new Map(), text: '', html: '' };
  // latin1 keeps every byte as one character, so that 8bit parts are decoded by their own charset.
  const top = readPart(raw.toString('latin1'));
  found.headers = top.headers;
  collect(top, found);
  return found;
}

interface Part {
  headers: Map<string, string>;
  body: string;
}

function readPart(source: string): Part {
  const split = /\r?\n\r?\n/.exec(source);
  const head = split ? source.slice(0, split.index) : source;
  const body = split ? source.slice(split.index + split[0].length) : '';
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(utf8(line.slice(colon + 1).trim())));
  }
  return { headers, body };
}

function collect(part: Part, found: ParsedMessage): void {
  const type = headerValue(part.headers.get('content-type') ?? 'text/plain');
  if (type.value.startsWith('multipart/')) {
    for (const child of splitMultipart(part.body, type.params.boundary ?? '')) collect(readPart(child), found);
    return;
  }
  if (headerValue(part.headers.get('content-disposition') ?? 'inline').value === 'attachment') return;
  const decoded = decodeBody(part.body, part.headers.get('content-transfer-encoding') ?? '7bit', type.params.charset ?? 'utf-8');
  if (type.value === 'text/plain' && !found.text) found.text = decoded;
  if (type.value === 'text/html' && !found.html) found.html = decoded;
}

function splitMultipart(body: string, boundary: string): string[] {
  if (!boundary) throw new Error('a multipart part without a boundary');
  const parts: string[] = [];
  const lines = body.split(/\r?\n/);
  let current: string[] | undefined;
  for (const line of lines) {
    if (line.trimEnd() === `--${boundary}--`) break;
    if (line.trimEnd() === `--${boundary}`) {
      if (current) parts.push(current.join('\r\n'));
      current = [];
    } else current?.push(line);
  }
  if (current) parts.push(current.join('\r\n'));
  return parts;
}

/** `text/plain; charset="utf-8"` -> its value in lower case and its parameters (names in lower case). */
function headerValue(header: string): { value: string; params: Record<string, string> } {
  const [value = '', ...rest] = header.split(';');
  const params: Record<string, string> = {};
  for (const param of rest) {
    const eq = param.indexOf('=');
    if (eq > 0) params[param.slice(0, eq).trim().toLowerCase()] = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return { value: value.trim().toLowerCase(), params };
}

function decodeBody(body: string, encoding: string, charset: string): string {
  const bytes = (() => {
    switch (encoding.trim().toLowerCase()) {
      case 'base64': return Buffer.from(body.replace(/\s+/g, ''), 'base64');
      case 'quoted-printable': return quotedPrintable(body);
      default: return Buffer.from(body, 'latin1');
    }
  })();
  return new TextDecoder(charset).decode(bytes).replace(/\r\n/g, '\n').replace(/\n$/, '');
}

function quotedPrintable(text: string): Buffer {
  const soft = text.replace(/[ \t]+(?=\r?\n)/g, '').replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const hex = soft[i] === '=' ? /^[0-9A-Fa-f]{2}/.exec(soft.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(soft.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes);
}

/** RFC 2047 words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`); the space between two of them does not count. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([bBqQ])\?([^?]*)\?=/g, (_all, charset: string, kind: string, data: string) => {
      const bytes = kind.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : quotedPrintable(data.replace(/_/g, ' '));
      return new TextDecoder(charset.split('*')[0]).decode(bytes);
    });
}

/** A header's raw 8-bit bytes (latin1 here) as UTF-8, as SMTPUTF8 headers are written. */
function utf8(latin1: string): string {
  return /[\x80-\xff]/.test(latin1) ? Buffer.from(latin1, 'latin1').toString('utf8') : latin1;
}
