import { startTestService, type TestService } from '../../support/service';
import { WsSession } from './ws-session';
import { createTestMerchant } from '../../support/merchants';

const TOO_LARGE = { message: 'The document is larger than 100 KiB; the limit is 100 KiB.', extensions: { code: 'QUERY_TOO_COMPLEX' } };
const TOO_MANY_TOKENS = { message: 'The document has more than 10000 tokens; the limit is 10000.', extensions: { code: 'QUERY_TOO_COMPLEX' } };

/** `{ health }` padded with a comment (no tokens) to exactly `bytes` UTF-8 bytes. */
const paddedTo = (bytes: number, fill = 'x') => {
  const head = '{ health } #';
  const fillBytes = Buffer.byteLength(fill);
  return head + fill.repeat(Math.floor((bytes - head.length) / fillBytes)) + 'x'.repeat((bytes - head.length) % fillBytes);
};
/** 4,995 spreads of one fragment: exactly 10,000 tokens, or 10,001 with the operation named. */
const spreads = (name = '') => `query ${name}{ ${'...F '.repeat(4_995)}} fragment F on Query { health }`;
/** A short document of many tokens: an argument holding `pairs` empty lists (two tokens each, no separators). */
const emptyLists = (pairs: number) => `{ health(x: [${'[]'.repeat(pairs)}]) }`;

describe('GraphQL documents over 100 KiB or 10,000 tokens are refused before they are parsed', () => {
  let t: TestService;
  let apiKey: string;
  beforeAll(async () => {
    t = await startTestService();
    apiKey = (await createTestMerchant(t)).keys.test.privateKey;
  });
  afterAll(async () => {
    await t.close();
  });

  const post = async (query: string) => {
    const res = await fetch(`${t.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    return { status: res.status, body: await res.json() };
  };
  const get = async (query: string) => {
    const res = await fetch(`${t.baseUrl}/graphql?query=${query}`, { headers: { 'apollo-require-preflight': 'true' } });
    return { status: res.status, body: await res.json() };
  };

  describe('over HTTP', () => {
    it('takes a document of exactly 100 KiB and refuses one byte more, counting bytes rather than characters', async () => {
      const exact = paddedTo(100 * 1024);
      expect(Buffer.byteLength(exact)).toBe(102_400);
      expect(await post(exact)).toEqual({ status: 200, body: { data: { health: 'ok' } } });
      expect(await post(paddedTo(100 * 1024 + 1))).toEqual({ status: 400, body: { errors: [TOO_LARGE] } });
      // 60,000 characters, 120,000 bytes.
      const accented = `{ health } #${'é'.repeat(60_000)}`;
      expect(accented.length).toBeLessThan(100 * 1024);
      expect(await post(accented)).toEqual({ status: 400, body: { errors: [TOO_LARGE] } });
    });

    it('refuses a 900 KB fragment-spread document without a key', async () => {
      const bomb = `query { ...F ${'...F '.repeat(180_000)}} fragment F on Query { health }`;
      expect(bomb.length).toBeGreaterThan(900_000);
      expect(await post(bomb)).toEqual({ status: 400, body: { errors: [TOO_LARGE] } });
    });

    it('takes 10,000 tokens and refuses 10,001', async () => {
      expect(await post(spreads())).toEqual({ status: 200, body: { data: { health: 'ok' } } });
      expect(await post(spreads('Named '))).toEqual({ status: 400, body: { errors: [TOO_MANY_TOKENS] } });
      expect(await post(emptyLists(6_000))).toEqual({ status: 400, body: { errors: [TOO_MANY_TOKENS] } });
    });

    it('applies both limits to a GET query string', async () => {
      expect((await get(encodeURIComponent('{ health }'))).body).toEqual({ data: { health: 'ok' } });
      // Brackets travel unencoded: 12,000 tokens in about 12 KB of URL.
      expect(await get(emptyLists(6_000).replace(/ /g, '+'))).toEqual({ status: 400, body: { errors: [TOO_MANY_TOKENS] } });
    });
  });

  describe('over WebSocket', () => {
    it('refuses a document of more than 10,000 tokens as an error of that operation; the socket goes on', async () => {
      const s = await WsSession.open(t.baseUrl, { 'api-key': apiKey });
      try {
        s.subscribe('many', emptyLists(6_000));
        expect(await s.result('many')).toEqual({ id: 'many', type: 'error', payload: [TOO_MANY_TOKENS] });
        s.subscribe('fine', spreads());
        expect(await s.result('fine')).toEqual({ id: 'fine', type: 'next', payload: { data: { health: 'ok' } } });
      } finally {
        s.close();
      }
    });

    it('never lets a document over 100 KiB arrive: the message is larger than a socket takes', async () => {
      const s = await WsSession.open(t.baseUrl, { 'api-key': apiKey });
      s.subscribe('huge', paddedTo(100 * 1024 + 1));
      expect((await s.closed).code).toBe(1009);
    });
  });
});
