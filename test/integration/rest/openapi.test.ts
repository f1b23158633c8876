import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import ts from 'typescript';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request, type HttpResult } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { PLAINTEXTS, routeSchemas, type RouteSchemaName } from '../../../src/rest/schemas';

let refCounter = 0;
const nextRef = () => `OAS-${process.pid}-${Date.now()}-${++refCounter}`;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '100001' };
const card = (cardNumber: string) => ({ cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing });
const orderPlaintext = (reference: string, payment: Record<string, unknown> = {}) => ({
  customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
  order: { amount: 1000, reference, description: 'Two tickets', currency: 'NGN' },
  payment: { RedirectUrl: 'https://merchant.test/done', ...payment },
});

/** Where each route sits in the OpenAPI document. */
const OPERATIONS: Record<RouteSchemaName, [path: string, method: 'get' | 'post' | 'patch']> = {
  createLink: ['/checkout/links/create', 'post'],
  editLink: ['/checkout/links/{id}/edit', 'patch'],
  activateLink: ['/checkout/links/{id}/status/activate', 'patch'],
  disableLink: ['/checkout/links/{id}/status/disable', 'patch'],
  cancelRecurring: ['/checkout/links/recurringpayment/{reference}/cancel', 'patch'],
  listLinks: ['/checkout/links/all', 'get'],
  linkTypes: ['/checkout/links/types', 'get'],
  frequencies: ['/checkout/frequencies', 'get'],
  createOrder: ['/checkout/order/create', 'post'],
  fee: ['/checkout/order/fee', 'post'],
  status: ['/checkout/order/status', 'post'],
  track: ['/checkout/order/event/track', 'post'],
  pay: ['/checkout/order/pay', 'post'],
  verify: ['/checkout/order/verify', 'post'],
  banks: ['/checkout/banks', 'get'],
};

/**
 * openapi-typescript's Node API, run in a plain Node process: one of its dependencies is an ES
 * module that Jest's module loader cannot require.
 */
function generateClientTypes(document: unknown, dir: string): void {
  fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document));
  const script = `
    const fs = require('node:fs');
    const { default: openapiTS, astToString } = require('openapi-typescript');
    openapiTS(JSON.parse(fs.readFileSync(process.argv[1], 'utf8')))
      .then((ast) => fs.writeFileSync(process.argv[2], astToString(ast)))
      .catch((err) => { console.error(err); process.exit(1); });`;
  execFileSync(process.execPath, ['-e', script, path.join(dir, 'openapi.json'), path.join(dir, 'api.ts')], {
    cwd: path.resolve(__dirname, '../../..'),
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

interface Captured {
  route: RouteSchemaName;
  status: number;
  body: unknown;
}

describe('REST: the typed OpenAPI document', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let doc: any;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    doc = (await request(t.baseUrl, 'GET', '/openapi.json')).body;
  });
  afterAll(async () => {
    await t.close();
  });

  it('is served at /openapi.json and at the old /docs/openapi.json, as OpenAPI 3.1', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const old = await request(t.baseUrl, 'GET', '/docs/openapi.json');
    expect(old.body).toEqual(doc);
    expect(Object.keys(doc.paths).sort()).toEqual(
      Object.values(OPERATIONS)
        .map(([p]) => p)
        .filter((p, i, all) => all.indexOf(p) === i)
        .sort(),
    );
  });

  it('applies the api-key security scheme to every operation, with a real schema for every status', () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'api-key' });
    for (const [route, [p, method]] of Object.entries(OPERATIONS)) {
      const op = doc.paths[p][method];
      expect({ route, security: op.security }).toEqual({ route, security: [{ apiKey: [] }] });
      // The key is the security scheme, not a loose header parameter.
      expect((op.parameters ?? []).map((x: { name: string }) => x.name.toLowerCase())).not.toContain('api-key');
      const statuses = Object.keys(op.responses);
      expect(statuses).toEqual(expect.arrayContaining(['200', '400', '401', '404', '500']));
      for (const status of statuses) {
        const content = op.responses[status].content['application/json'];
        expect({ route, status, hasSchema: typeof content.schema === 'object' && Object.keys(content.schema).length > 1 }).toEqual({
          route,
          status,
          hasSchema: true,
        });
        if (status !== '200')
          expect(content.schema.anyOf.map((s: any) => s.required)).toEqual([
            ['status', 'statusCode', 'message'],
            ['status', 'status_code', 'message'],
          ]);
      }
    }
    expect(doc.paths['/checkout/links/all'].get.responses['200'].content['application/json'].schema).toMatchObject({
      type: 'array',
      items: { title: 'PaymentLink' },
    });
    expect(doc.paths['/checkout/order/status'].post.responses['200'].content['application/json'].schema.required).toEqual([
      'is_final_status',
      'requery_needed',
      'requery_type',
      'data',
      'status',
      'status_code',
      'message',
    ]);
  });

  it('describes the plaintext of every encrypted endpoint beside its { data } body, with examples', () => {
    for (const route of ['createOrder', 'fee', 'status', 'track', 'pay'] as const) {
      const [p, method] = OPERATIONS[route];
      const body = doc.paths[p][method].requestBody.content['application/json'];
      expect(body.schema.required).toEqual(['data']);
      const ref: string = body.schema['x-plaintext'];
      const name = ref.replace('#/components/schemas/', '');
      expect(body.schema.description).toContain(name);
      const plaintext = doc.components.schemas[name];
      expect(plaintext).toMatchObject({ type: 'object', title: name });
      expect(plaintext.examples.length).toBeGreaterThan(0);
      expect(body.example ?? body.examples).toBeDefined();
    }
    expect(doc.components.schemas.PayPlaintext.properties.card.properties.billingAddress).toBeDefined();
    expect(doc.components.schemas.PayPlaintext.properties.card.required ?? []).not.toContain('billingAddress');
    const create = doc.paths['/checkout/links/create'].post.requestBody.content['application/json'];
    expect(create.schema.required).toEqual(['Name', 'Description', 'PaymentType', 'AuthOption']);
    expect(create.schema.properties.Name['x-aliases']).toBeUndefined();
    expect(doc.components.schemas.FeePlaintext.properties.paymentOption['x-aliases']).toEqual(['paymentmethod']);
    expect(doc.components.schemas.PayPlaintext.properties.paymentOption['x-aliases']).toEqual(['paymentmethod']);
    expect(doc.components.schemas.TrackPlaintext.properties.event['x-aliases']).toEqual(['eventname']);
    expect(create.example).toMatchObject({ Name: 'Gym membership' });
  });

  it('every example in the document matches its schema', () => {
    const schemas: Array<[string, TSchema]> = Object.entries(PLAINTEXTS);
    for (const [route, r] of Object.entries(routeSchemas)) {
      if ('body' in r) schemas.push([`${route} body`, r.body as TSchema]);
      for (const [status, schema] of Object.entries(r.response)) schemas.push([`${route} ${status}`, schema as TSchema]);
    }
    const problems: unknown[] = [];
    let examples = 0;
    for (const [name, schema] of schemas) {
      const check = TypeCompiler.Compile(schema);
      for (const example of (schema as { examples?: unknown[] }).examples ?? []) {
        examples += 1;
        if (!check.Check(example)) problems.push({ name, errors: [...check.Errors(example)].slice(0, 3).map((e) => `${e.path}: ${e.message}`) });
      }
    }
    expect(problems).toEqual([]);
    expect(examples).toBeGreaterThan(40);
    const pay = doc.paths['/checkout/order/pay'].post.responses['200'].content['application/json'];
    expect(pay.example).toMatchObject({ statusCode: '02', data: { paymentDetail: { redirectUrl: expect.any(String) } } });
  });

  it('serves Swagger UI at /docs from the npm package, with nothing from another origin', async () => {
    const page = await fetch(`${t.baseUrl}/docs`, { redirect: 'follow' });
    expect(page.status).toBe(200);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((x) => x[1]!);
    expect(assets).toContain('/docs/static/swagger-ui-bundle.js');
    for (const asset of assets) expect(asset.startsWith('/docs/static/')).toBe(true);
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await fetch(`${t.baseUrl}/docs/static/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    const shipped = fs.readFileSync(require.resolve('@fastify/swagger-ui/static/swagger-ui-bundle.js'), 'utf8');
    expect((await bundle.text()).length).toBe(shipped.length);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const init = await (await fetch(`${t.baseUrl}/docs/static/swagger-initializer.js`)).text();
    expect(init).toContain('"validatorUrl":null');
  });

  describe('real responses', () => {
    const captured: Captured[] = [];
    const keep = (route: RouteSchemaName, res: HttpResult) => {
      captured.push({ route, status: res.status, body: res.body });
      return res;
    };

    beforeAll(async () => {
      const { publicKey: pub, privateKey: priv, encryptionKey: enc } = m.keys.test;
      const enc_ = (p: string, plaintext: unknown) => postEncrypted(t.baseUrl, p, pub, enc, plaintext);
      const link = keep(
        'createLink',
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          body: { Name: 'Tickets', Description: 'Concert', PaymentType: 'MC', AuthOption: 'NOAUTH', Amount: '1000', Limit: '50' },
        }),
      ).body.data.paymentLink;
      keep('createLink', await request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: priv, body: { Description: 'x' } }));
      keep('createLink', await request(t.baseUrl, 'POST', '/checkout/links/create', { body: { Name: 'x' } }));
      keep(
        'createLink',
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          rawBody: 'Name=x',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
      );
      keep(
        'createLink',
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          body: { Name: 'a', Description: 'b', PaymentType: 'SC', AuthOption: 'AUTH' },
          headers: { 'idempotency-key': `oas-${nextRef()}` },
        }),
      );
      const reused = `oas-${nextRef()}`;
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: priv,
        body: { Name: 'a', Description: 'b', PaymentType: 'SC', AuthOption: 'AUTH' },
        headers: { 'idempotency-key': reused },
      });
      keep(
        'createLink',
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          body: { Name: 'c', Description: 'b', PaymentType: 'SC', AuthOption: 'AUTH' },
          headers: { 'idempotency-key': reused },
        }),
      );
      keep(
        'editLink',
        await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/edit`, {
          apiKey: priv,
          body: { Name: 'Tickets', Description: 'Concert', PaymentType: 'MC', Amount: '1000' },
        }),
      );
      keep(
        'editLink',
        await request(t.baseUrl, 'PATCH', '/checkout/links/999999999/edit', { apiKey: priv, body: { Name: 'x', Description: 'y', PaymentType: 'SC' } }),
      );
      keep('disableLink', await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/disable`, { apiKey: priv }));
      keep('activateLink', await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/activate`, { apiKey: priv }));
      keep('activateLink', await request(t.baseUrl, 'PATCH', '/checkout/links/abc/status/activate', { apiKey: priv }));
      // The public key manages no links (403).
      keep('createLink', await request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: pub, body: { Name: 'a', Description: 'b', PaymentType: 'SC' } }));
      keep(
        'editLink',
        await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/edit`, { apiKey: pub, body: { Name: 'x', Description: 'y', PaymentType: 'SC' } }),
      );
      keep('disableLink', await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/disable`, { apiKey: pub }));
      keep('activateLink', await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/activate`, { apiKey: pub }));
      keep('linkTypes', await request(t.baseUrl, 'GET', '/checkout/links/types', { apiKey: pub }));
      keep('frequencies', await request(t.baseUrl, 'GET', '/checkout/frequencies', { apiKey: pub }));
      keep('banks', await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: pub }));

      // A card order through 3-D Secure, on a subscription.
      const reference = nextRef();
      const subscriptionLink = (
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          body: { Name: 'Club', Description: 'Daily', PaymentType: 'SUB', AuthOption: 'AUTH', FrequencyId: '2', NumberOfPayments: '3' },
        })
      ).body.data.paymentLink;
      keep(
        'createOrder',
        await enc_('/checkout/order/create', orderPlaintext(reference, { paymentLinkId: subscriptionLink.id, frequencyId: 2, numberOfPayments: 3 })),
      );
      keep('createOrder', await request(t.baseUrl, 'POST', '/checkout/order/create', { apiKey: pub, body: {} }));
      keep('createOrder', await enc_('/checkout/order/create', orderPlaintext(reference)));
      keep('fee', await enc_('/checkout/order/fee', { amount: 1000, paymentOption: 'C' }));
      keep('fee', await enc_('/checkout/order/fee', { amount: 1000 }));
      keep('status', await enc_('/checkout/order/status', { reference }));
      keep('status', await enc_('/checkout/order/status', { reference: 'nope' }));
      keep('track', await enc_('/checkout/order/event/track', { orderReference: reference, event: 'checkout.viewed', metadata: { page: 1 } }));
      const pending = keep('pay', await enc_('/checkout/order/pay', { reference, paymentOption: 'C', country: 'NG', card: card('4111111111111111') }));
      await fetch(pending.body.data.paymentDetail.redirectUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
      keep('status', await enc_('/checkout/order/status', { reference }));
      const verified = keep('verify', await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: { reference } }));
      keep('verify', await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: pub, body: { reference } }));
      keep('verify', await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: { reference: 'nope' } }));
      keep(
        'cancelRecurring',
        await request(t.baseUrl, 'PATCH', `/checkout/links/recurringpayment/${verified.body.data.recurringPaymentReference}/cancel`, { apiKey: priv }),
      );
      keep('cancelRecurring', await request(t.baseUrl, 'PATCH', '/checkout/links/recurringpayment/RP-nope/cancel', { apiKey: priv }));

      // A payment-link order without authentication: paid at once, then one declined.
      const linkOrder = nextRef();
      keep('createOrder', await enc_('/checkout/order/create', orderPlaintext(linkOrder, { paymentLinkId: link.id })));
      keep('pay', await enc_('/checkout/order/pay', { reference: linkOrder, paymentOption: 'C', country: 'NG', card: card('5123450000000008') }));
      keep('verify', await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: { reference: linkOrder } }));
      const declined = nextRef();
      await enc_('/checkout/order/create', orderPlaintext(declined, { paymentLinkId: link.id }));
      keep('pay', await enc_('/checkout/order/pay', { reference: declined, paymentOption: 'C', country: 'NG', card: card('4000000000000069') }));
      keep('listLinks', await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: pub }));
      keep('listLinks', await request(t.baseUrl, 'GET', '/checkout/links/all?id=999999999', { apiKey: pub }));
    });

    it('covers success and failure answers of every route', () => {
      const routes = new Set(captured.map((c) => c.route));
      expect([...routes].sort()).toEqual(Object.keys(OPERATIONS).sort());
      expect(new Set(captured.map((c) => c.status))).toEqual(new Set([200, 400, 401, 402, 403, 404, 415, 422]));
      const paid = captured.find((c) => c.route === 'pay' && c.status === 200 && (c.body as { statusCode: string }).statusCode === '00');
      expect(paid).toBeDefined();
    });

    it('every answer has every documented field with its documented type (checked against the route schema)', () => {
      const problems: unknown[] = [];
      for (const c of captured) {
        const schema = (routeSchemas[c.route].response as Record<number, TSchema>)[c.status];
        if (!schema) {
          problems.push({ route: c.route, status: c.status, problem: 'status not documented' });
          continue;
        }
        const check = TypeCompiler.Compile(schema);
        if (!check.Check(c.body))
          problems.push({ route: c.route, status: c.status, errors: [...check.Errors(c.body)].slice(0, 3).map((e) => `${e.path}: ${e.message}`) });
      }
      expect(problems).toEqual([]);
      const created = captured.find((c) => c.route === 'createLink' && c.status === 200)!.body as { data: { subsidiary: { customization: unknown } } };
      expect(created.data.subsidiary.customization).toEqual([]);
    });

    it('a client generated from the document (openapi-typescript) type-checks against the real answers', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-openapi-'));
      try {
        generateClientTypes(doc, dir);
        const typed = (c: Captured) => {
          const [p, method] = OPERATIONS[c.route];
          return `paths['${p}']['${method}']['responses'][${c.status}]['content']['application/json']`;
        };
        const header = `import type { paths, components } from './api';\n`;
        // What clients send fits the generated request types too: plain bodies, and the plaintexts under components.schemas.
        const requests = [
          `export const linkBody: paths['/checkout/links/create']['post']['requestBody']['content']['application/json'] = ${JSON.stringify({ Name: 'Gym', Description: 'd', PaymentType: 'SC', AuthOption: 'AUTH', Amount: 5000, Limit: '10' })};`,
          `export const editBody: paths['/checkout/links/{id}/edit']['patch']['requestBody']['content']['application/json'] = ${JSON.stringify({ id: null, Name: 'Gym', Description: 'd', PaymentType: 'MC' })};`,
          `export const encrypted: paths['/checkout/order/pay']['post']['requestBody']['content']['application/json'] = { data: 'base64' };`,
          `export const pay: components['schemas']['PayPlaintext'] = ${JSON.stringify({ reference: 'R', paymentOption: 'C', country: 'NG', card: card('4111111111111111') })};`,
          `export const order: components['schemas']['CreateOrderPlaintext'] = ${JSON.stringify(orderPlaintext('R', { paymentLinkId: 1, frequencyId: 2, numberOfPayments: 3 }))};`,
        ];
        fs.writeFileSync(
          path.join(dir, 'answers.ts'),
          header +
            captured
              .map((c, i) => `export const answer${i}: ${typed(c)} = ${JSON.stringify(c.body)};`)
              .concat(requests)
              .join('\n') +
            '\n',
        );
        // The same check must fail on an answer that breaks the document: a null where an array is documented, an undocumented field.
        const link = captured.find((c) => c.route === 'createLink' && c.status === 200)!;
        const broken = JSON.parse(JSON.stringify(link.body));
        broken.data.subsidiary.customization = null;
        broken.data.paymentLink.undocumented = true;
        fs.writeFileSync(path.join(dir, 'broken.ts'), `${header}export const broken: ${typed(link)} = ${JSON.stringify(broken)};\n`);

        const diagnostics = (file: string) => {
          const program = ts.createProgram([path.join(dir, file)], {
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: [],
            target: ts.ScriptTarget.ES2022,
            module: ts.ModuleKind.CommonJS,
          });
          return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        };
        expect(diagnostics('answers.ts')).toEqual([]);
        const failures = diagnostics('broken.ts');
        expect(failures.join('\n')).toMatch(/'null' is not assignable to type 'unknown\[\]'/);
        expect(failures.join('\n')).toMatch(/undocumented/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  });
});
