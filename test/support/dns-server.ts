import dgram from 'node:dgram';
import { EventEmitter, once } from 'node:events';
import net from 'node:net';

export interface DnsQuestion {
  /** The name asked, lower case, without the final dot. */
  name: string;
  /** `A`, `AAAA`, or the record type's number. */
  type: string;
}

export interface DnsServer {
  /** `127.0.0.1:port`, as a resolver's servers setting takes it. */
  address: string;
  /** Every question received, in order. */
  questions: DnsQuestion[];
  /** Resolves once a question about `name` has arrived (at once when one already has); fails after `ms`. */
  asked(name: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

const TYPES: Record<number, string> = { 1: 'A', 28: 'AAAA' };

/**
 * A DNS server on loopback UDP for tests: it answers A and AAAA queries from `records`, answers
 * "no such name" (NXDOMAIN) for other names, and never answers at all for the names in `silent`:
 * a nameserver that hangs.
 */
export async function startDnsServer(records: Record<string, string[]>, silent: readonly string[] = []): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4');
  const questions: DnsQuestion[] = [];
  const heard = new EventEmitter();
  socket.on('message', (message, peer) => {
    const question = readQuestion(message);
    if (!question) return;
    questions.push({ name: question.name, type: TYPES[question.type] ?? String(question.type) });
    heard.emit(question.name);
    if (silent.includes(question.name)) return;
    const known = records[question.name];
    const family = question.type === 1 ? 4 : question.type === 28 ? 6 : 0;
    const addresses = (known ?? []).filter((a) => net.isIP(a) === family);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0); // the query's id
    // A response, recursion desired as asked, recursion available, NOERROR or NXDOMAIN.
    header.writeUInt16BE(0x8080 | (message.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const answers = addresses.map((address) => {
      const data = family === 4 ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(question.type, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(0, 6); // TTL
      record.writeUInt16BE(data.length, 10);
      return Buffer.concat([record, data]);
    });
    socket.send(Buffer.concat([header, message.subarray(12, question.end), ...answers]), peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    async asked(name, ms = 10_000) {
      if (questions.some((q) => q.name === name)) return;
      const signal = AbortSignal.timeout(ms);
      await once(heard, name, { signal }).catch(() => {
        throw new Error(`no question about ${name} reached the DNS server within ${ms} ms`);
      });
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** The first question of a query: its name, type and where it ends. Null when malformed. */
function readQuestion(message: Buffer): { name: string; type: number; end: number } | null {
  if (message.length < 12 || message.readUInt16BE(4) < 1) return null;
  const labels: string[] = [];
  let offset = 12;
  while (offset < message.length && message[offset] !== 0) {
    const length = message[offset]!;
    labels.push(message.subarray(offset + 1, offset + 1 + length).toString('latin1'));
    offset += 1 + length;
  }
  if (offset + 5 > message.length) return null;
  return { name: labels.join('.').toLowerCase(), type: message.readUInt16BE(offset + 1), end: offset + 5 };
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail] = address.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const front = groups(head);
  const back = groups(tail);
  const all = tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = Buffer.alloc(16);
  all.forEach((g, i) => bytes.writeUInt16BE(g, i * 2));
  return bytes;
}
