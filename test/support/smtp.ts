import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { waitFor } from '../integration/events/helpers';

/** One message the test SMTP server accepted, with its text and HTML bodies decoded. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  raw: string;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`: for SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /** The first message to `to` that `match` accepts (polled with a deadline). */
  waitForMail(to: string, match?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** Makes every later message fail (the server answers 554 to the DATA command) or succeed again. */
  refuse(refusing: boolean): void;
  /** Makes the next `count` messages fail (554), then accepts again. */
  refuseNext(count: number): void;
  /** Resolves with the next message accepted. */
  nextMail(): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** A real SMTP server in this process (smtp-server), on a free loopback port: no TLS, any credentials accepted. */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  let refusing = false;
  let refuseCount = 0;
  const waiting: ((mail: ReceivedMail) => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth: (_auth, _session, callback) => callback(null, { user: 'test' }),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refuseCount > 0) refuseCount -= 1;
        else if (!refusing) return accept();
        return callback(Object.assign(new Error('Mailbox unavailable (refused by the test)'), { responseCode: 554 }));
      });
      function accept() {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail = {
          ...parseMessage(raw),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        };
        received.push(mail);
        callback();
        for (const resolve of waiting.splice(0)) resolve(mail);
      }
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    async waitForMail(to, match = () => true, timeoutMs = 15_000) {
      let found: ReceivedMail | undefined;
      await waitFor(() => (found = received.find((m) => m.to.includes(to) && match(m))) !== undefined, timeoutMs, `an email to ${to}`);
      return found!;
    },
    refuse: (value) => (refusing = value),
    refuseNext: (count) => (refuseCount = count),
    nextMail: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The subject and the text/plain and text/html bodies of a MIME message (what nodemailer writes: one level of multipart). */
function parseMessage(raw: string): { subject: string; text: string; html: string } {
  const [head, ...rest] = raw.split(/\r?\n\r?\n/);
  const headers = parseHeaders(head!);
  const body = rest.join('\r\n\r\n');
  const parts: { type: string; content: string }[] = [];
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (boundary) {
    for (const section of body.split(`--${boundary}`).slice(1)) {
      if (section.startsWith('--')) break;
      const [partHead, ...partBody] = section.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
      const h = parseHeaders(partHead!);
      parts.push({ type: h['content-type'] ?? '', content: decode(partBody.join('\r\n\r\n'), h['content-transfer-encoding']) });
    }
  } else {
    parts.push({ type: headers['content-type'] ?? 'text/plain', content: decode(body, headers['content-transfer-encoding']) });
  }
  const of = (type: string) => parts.find((p) => p.type.toLowerCase().startsWith(type))?.content ?? '';
  return { subject: headers.subject ?? '', text: of('text/plain'), html: of('text/html') };
}

function parseHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.replace(/\r?\n(?=[ \t])/g, '').split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return headers;
}

function decode(content: string, encoding = '7bit'): string {
  const trimmed = content.replace(/\r?\n$/, '');
  switch (encoding.toLowerCase()) {
    case 'base64':
      return Buffer.from(trimmed.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable': {
      const bytes = trimmed.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
      return Buffer.from(bytes, 'latin1').toString('utf8');
    }
    default:
      return trimmed;
  }
}
