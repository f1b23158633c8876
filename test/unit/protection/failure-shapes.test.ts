import Fastify, { type FastifyInstance } from 'fastify';
import { errorBody, sendFailure, type Failure } from '../../../src/protection/failure-shapes';
import { CHECKOUT_PAGE_CSP } from '../../../src/protection/route-policy';

const OUTAGE: Failure = { status: 503, code: '503', graphqlCode: 'SERVICE_UNAVAILABLE', message: 'Down for a moment.', extensions: { requestId: 'r-1' } };

/** One route of each family answering the same failure, chosen by the test through a header. */
async function server(): Promise<FastifyInstance> {
  const app = Fastify();
  const answer = (request: Parameters<typeof sendFailure>[0], reply: Parameters<typeof sendFailure>[1]) =>
    sendFailure(request, reply, request.headers['x-page-title'] ? { ...OUTAGE, pageTitle: String(request.headers['x-page-title']) } : OUTAGE);
  app.get('/rest', answer);
  app.get('/graphql', { config: { family: 'graphql' } }, answer);
  app.get('/page', { config: { family: 'page' } }, answer);
  await app.ready();
  return app;
}

describe('failures answered in the matched route family’s shape', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await server();
  });
  afterAll(() => app.close());

  it('a REST route gets the legacy error envelope with the failure’s code', async () => {
    const res = await app.inject({ method: 'GET', url: '/rest' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(JSON.stringify({ status: 'failed', statusCode: '503', message: 'Down for a moment.' }));
  });

  it('the GraphQL route gets one GraphQL error: extensions.code first, then the extra extensions', async () => {
    const res = await app.inject({ method: 'GET', url: '/graphql' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(JSON.stringify({ errors: [{ message: 'Down for a moment.', extensions: { code: 'SERVICE_UNAVAILABLE', requestId: 'r-1' } }] }));
  });

  it('a page route gets an HTML page with the page headers when the failure has a page title, else the REST envelope', async () => {
    const page = await app.inject({ method: 'GET', url: '/page', headers: { 'x-page-title': 'Unavailable' } });
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(CHECKOUT_PAGE_CSP);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('<title>Unavailable</title>');
    expect(page.body).toContain('<p>Down for a moment.</p>');

    const plain = await app.inject({ method: 'GET', url: '/page' });
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(plain.json()).toEqual({ status: 'failed', statusCode: '503', message: 'Down for a moment.' });
  });

  it('the REST envelope names codes 13 and 100 under status_code, every other under statusCode', () => {
    expect(errorBody('13', 'x')).toEqual({ status: 'failed', status_code: '13', message: 'x' });
    expect(errorBody('100', 'x')).toEqual({ status: 'failed', status_code: '100', message: 'x' });
    expect(errorBody('VAL400', 'x')).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'x' });
  });
});
