import http from 'node:http';
import { constants, createPublicKey, publicEncrypt, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';

/**
 * What the bench sends to this load generator (a child process, so its work stays off the
 * servers' event loops). The bodies are built here, before 'ready', so no measured time is
 * spent encrypting.
 */
export interface LoadRequest {
  url: string;
  /** The api-key header (none for the baselines). */
  apiKey?: string;
  /**
   * What each request body is (built here); or give `payloads`/`bodies` ready-made. `pay`: a card pay of `references[i]`, each order once.
   * `refund`: GraphQL `refundOrder` of 1 (the url is the service's /graphql, the private key), the references in turn.
   * `capture`: GraphQL `captureOrder` of all that was authorized (the url is the service's /graphql, the private key) of `references[i]`, each order once.
   */
  kind?: 'create' | 'verify' | 'status' | 'pay' | 'refund' | 'capture';
  /** Ready-made encrypted `data` values, one request each. */
  payloads?: string[];
  /** Ready-made raw JSON bodies, one request each. */
  bodies?: string[];
  /** Merchant-form encryption key (base64 of "<bits>!<RSAKeyValue>…"), for create and status. */
  encryptionKey?: string;
  /** verify, status and refund: the order references to ask for, in turn; pay and capture: the orders to pay or capture, one request each. */
  references?: string[];
  /** A prefix making create references unique across rounds and targets. */
  referencePrefix?: string;
  /** create: the orders are made on this payment link (`payment.paymentLinkId`). */
  paymentLinkId?: number;
  /** How many bodies to prepare (the run stops early when they are used up). */
  count?: number;
  concurrency: number;
  durationMs: number;
}

export interface LoadResult {
  ok: number;
  failed: number;
  firstFailure?: string;
  elapsedMs: number;
  /** Latency of every request, in ms. */
  latenciesMs: number[];
  ranOut: boolean;
  /**
   * When the prepared bodies ran out: the time from the start until the first client found none
   * left (until then every client had a request in flight), and the requests answered with success
   * by then. The rate over that window is the closed loop's at full concurrency; `ok / elapsedMs`
   * would also count the tail in which fewer and fewer requests are in flight.
   */
  fullMs?: number;
  okWhileFull?: number;
}

/** The merchant's encryption key as a Node public key (the SDK's forge encryption is too slow to prepare thousands). */
function publicKeyOf(encryptionKey: string): { key: KeyObject; k: number } {
  const decoded = Buffer.from(encryptionKey, 'base64').toString('utf8');
  const [bits, xml] = decoded.split('!') as [string, string];
  const n = /<Modulus>([^<]+)<\/Modulus>/.exec(xml)![1]!;
  const e = /<Exponent>([^<]+)<\/Exponent>/.exec(xml)![1]!;
  const b64url = (s: string) => Buffer.from(s, 'base64').toString('base64url');
  return { key: createPublicKey({ key: { kty: 'RSA', n: b64url(n), e: b64url(e) }, format: 'jwk' }), k: Number(bits) / 8 };
}

/** The same wire format as the SDK's encryptPayload: PKCS#1 v1.5 blocks of at most k - 11 bytes, concatenated, base64. */
export function encryptFast(plaintext: object, pub: { key: KeyObject; k: number }): string {
  const bytes = Buffer.from(JSON.stringify(plaintext), 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += pub.k - 11) {
    parts.push(publicEncrypt({ key: pub.key, padding: constants.RSA_PKCS1_PADDING }, bytes.subarray(i, i + pub.k - 11)));
  }
  return Buffer.concat(parts).toString('base64');
}

/** An approved sandbox card (docs/api.md): NOAUTH links settle it in the one request. */
export function payPlaintext(reference: string) {
  return { reference, paymentOption: 'C', country: 'NG', card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '39', cvv: '123' } };
}

/** A partial refund of 1 (in the order's currency) of a paid order, through GraphQL. */
export const REFUND_MUTATION = 'mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { id status } }';

/** A capture of all the money held for an Authorized order (no amount), through GraphQL. */
export const CAPTURE_MUTATION = 'mutation ($input: CaptureOrderInput!) { captureOrder(input: $input) { orderReference statusId } }';

export function orderPlaintext(reference: string, i: number, paymentLinkId?: number) {
  return {
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada${i % 50}@example.test` },
    order: { amount: 2500, reference, description: 'Bench order', currency: 'NGN' },
    payment: { RedirectUrl: 'https://shop.example.test/back', ...(paymentLinkId === undefined ? {} : { paymentLinkId }) },
  };
}

function bodies(req: LoadRequest): string[] {
  if (req.bodies) return req.bodies;
  if (req.payloads) return req.payloads.map((data) => JSON.stringify({ data }));
  const out: string[] = new Array(req.count ?? 0);
  const pub = req.encryptionKey ? publicKeyOf(req.encryptionKey) : undefined;
  for (let i = 0; i < out.length; i++) {
    if (req.kind === 'create') {
      out[i] = JSON.stringify({ data: encryptFast(orderPlaintext(`${req.referencePrefix}-${i}`, i, req.paymentLinkId), pub!) });
    } else if (req.kind === 'pay') {
      out[i] = JSON.stringify({ data: encryptFast(payPlaintext(req.references![i]!), pub!) });
    } else if (req.kind === 'refund') {
      const reference = req.references![i % req.references!.length]!;
      out[i] = JSON.stringify({ query: REFUND_MUTATION, variables: { input: { reference, amount: '1' } } });
    } else if (req.kind === 'capture') {
      out[i] = JSON.stringify({ query: CAPTURE_MUTATION, variables: { input: { reference: req.references![i]! } } });
    } else {
      const reference = req.references![i % req.references!.length]!;
      out[i] = req.kind === 'verify' ? JSON.stringify({ reference }) : JSON.stringify({ data: encryptFast({ reference }, pub!) });
    }
  }
  return out;
}

/**
 * Whether an answer is a success: the REST paths say `"status":"success"`; a GraphQL refund or capture answers its
 * `refundOrder` or `captureOrder` and no `errors`.
 */
function succeeded(kind: LoadRequest['kind'], status: number, text: string): boolean {
  if (status !== 200) return false;
  if (kind !== 'refund' && kind !== 'capture') return text.includes('"status":"success"');
  try {
    const answer = JSON.parse(text) as { data?: { refundOrder?: unknown; captureOrder?: unknown } | null; errors?: unknown };
    return answer.errors === undefined && (kind === 'refund' ? answer.data?.refundOrder : answer.data?.captureOrder) != null;
  } catch {
    return false;
  }
}

/** Closed loop: `concurrency` clients on kept-alive connections each POST, read the answer, POST again, until the time is up. */
async function run(req: LoadRequest, prepared: string[]): Promise<LoadResult> {
  const result: LoadResult = { ok: 0, failed: 0, elapsedMs: 0, latenciesMs: [], ranOut: false };
  const url = new URL(req.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: req.concurrency });
  let next = 0;
  const start = performance.now();
  const one = (body: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      if (req.apiKey) headers['api-key'] = req.apiKey;
      const r = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      });
      r.on('error', reject);
      r.end(body);
    });
  const client = async () => {
    while (performance.now() - start < req.durationMs) {
      if (next >= prepared.length) {
        if (!result.ranOut) {
          result.ranOut = true;
          result.fullMs = performance.now() - start;
          result.okWhileFull = result.ok;
        }
        return;
      }
      const body = prepared[next++]!;
      const t0 = performance.now();
      try {
        const res = await one(body);
        result.latenciesMs.push(performance.now() - t0);
        if (succeeded(req.kind, res.status, res.text)) result.ok += 1;
        else {
          result.failed += 1;
          result.firstFailure ??= `${res.status} ${res.text.slice(0, 300)}`;
        }
      } catch (err) {
        result.latenciesMs.push(performance.now() - t0);
        result.failed += 1;
        result.firstFailure ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: req.concurrency }, client));
  result.elapsedMs = performance.now() - start;
  agent.destroy();
  return result;
}

// First the request, answered with 'ready' once the bodies are prepared; then 'go'.
if (process.send) {
  process.once('message', (req: LoadRequest) => {
    const prepared = bodies(req);
    process.once('message', () => {
      run(req, prepared).then(
        (result) => process.send!(result, () => process.exit(0)),
        (err) => {
          process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
          process.exit(1);
        },
      );
    });
    process.send!('ready');
  });
}
