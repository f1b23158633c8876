import { startTestService, type TestService } from '../../support/service';
import { request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/;

describe('REST: payment links', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let key: string;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    key = m.keys.test.privateKey;
  });
  afterAll(async () => {
    await t.close();
  });

  const create = (body: unknown, apiKey = key, headers: Record<string, string> = {}) =>
    request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey, body, headers });

  const validLink = {
    Name: 'Gym membership',
    Description: 'Monthly access to the gym',
    PaymentType: 'SC',
    Currency: 'NGN',
    AuthOption: 'AUTH',
    Amount: '5000',
    Limit: '10',
  };

  it('creates an active link and answers in Envelope A with the whole resource', async () => {
    const res = await create(validLink);
    expect(res.status).toBe(200);
    const link = res.body.data.paymentLink;
    expect(res.body).toEqual({
      data: {
        paymentLink: {
          id: expect.any(Number),
          name: 'Gym membership',
          paymentType: null,
          logo: null,
          amount: 5000,
          dateCreated: expect.stringMatching(TIMESTAMP),
          reference: expect.stringMatching(/^PL[A-Z2-9]{16}$/),
          createdBy: null,
          creatorEmail: null,
          isActive: true,
          currency: 'NGN',
          limit: 10,
          paymentLinkUrl: `${t.config.publicUrl}/pay/${link.reference}`,
          appEnvironmentId: expect.any(Number),
          paymentLinkType: 'Single Charge',
          paymentLinkCode: 'SC',
          description: 'Monthly access to the gym',
        },
        subsidiary: { ...m.subsidiary, customization: [] },
      },
      status: 'success',
      statusCode: '00',
      message: 'Payment details fetched successfully',
    });
    // Key order is part of byte-for-byte compatibility.
    expect(Object.keys(res.body)).toEqual(['data', 'status', 'statusCode', 'message']);
    expect(Object.keys(link)).toEqual([
      'id',
      'name',
      'paymentType',
      'logo',
      'amount',
      'dateCreated',
      'reference',
      'createdBy',
      'creatorEmail',
      'isActive',
      'currency',
      'limit',
      'paymentLinkUrl',
      'appEnvironmentId',
      'paymentLinkType',
      'paymentLinkCode',
      'description',
    ]);
  });

  it('matches property names case-insensitively and lets the customer enter the amount when Amount is empty', async () => {
    const res = await create({ name: 'Donations', DESCRIPTION: 'Give what you like', paymenttype: 'mc', authOption: 'NOAUTH', Amount: '' });
    expect(res.status).toBe(200);
    expect(res.body.data.paymentLink).toMatchObject({
      name: 'Donations',
      amount: null,
      currency: 'NGN',
      limit: null,
      paymentLinkCode: 'MC',
      paymentLinkType: 'Multiple Charge',
    });
  });

  it.each([
    [{ ...validLink, Name: undefined }, 'The Name field is required.'],
    [{ ...validLink, Name: '   ' }, 'The Name field is required.'],
    [{ ...validLink, Description: undefined }, 'The Description field is required.'],
    [{ ...validLink, PaymentType: undefined }, 'The PaymentType field is required.'],
    [{ ...validLink, AuthOption: undefined }, 'The AuthOption field is required.'],
    [{ ...validLink, PaymentType: 'XX' }, 'PaymentType is currently not supported.'],
    [{ ...validLink, Currency: 'JPY' }, 'Currency is currently not supported.'],
    [{ ...validLink, AuthOption: 'MAYBE' }, 'AuthOption is currently not supported.'],
    [{ ...validLink, Amount: '0' }, 'The Amount field must be greater than zero.'],
    [{ ...validLink, Amount: '-10' }, 'The Amount field must be greater than zero.'],
    [{ ...validLink, Amount: 'ten' }, 'The Amount field must be a number.'],
    [{ ...validLink, Amount: 1e300 }, 'The Amount field must be at most 999999999999.99.'],
    [{ ...validLink, Amount: '10.123' }, 'The Amount field must have at most 2 decimal places.'],
    [{ ...validLink, Limit: '0' }, 'The Limit field must be a whole number of at least 1.'],
    [{ ...validLink, Website: 'javascript:alert(1)' }, 'The Website field must be an http or https URL.'],
    [{ ...validLink, Name: ['a'] }, 'The Name field must be a string.'],
    [{ ...validLink, name: 'dup' }, 'The Name field is given more than once.'],
    [{ ...validLink, Name: 'Gym\u0000' }, 'The Name field is not valid.'],
  ])('refuses bad input with VAL400: %j', async (body, message) => {
    const before = await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: key });
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message });
    const after = await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: key });
    expect(after.body.length).toBe(before.body.length);
  });

  it('reads a number sent for a string field as its text (legacy clients do)', async () => {
    const res = await create({ ...validLink, Name: 42, Limit: 3, Amount: 12.5 });
    expect(res.status).toBe(200);
    expect(res.body.data.paymentLink).toMatchObject({ name: '42', limit: 3, amount: 12.5 });
  });

  it.each([
    ['malformed JSON', '{"Name": ', 400, { status: 'failed', statusCode: 'VAL400', message: 'The request body is not valid JSON.' }],
    ['a JSON array', '[1,2]', 400, { status: 'failed', statusCode: 'VAL400', message: 'The request body must be a JSON object.' }],
    ['no body at all', '', 400, { status: 'failed', statusCode: 'VAL400', message: 'The Name field is required.' }],
  ])('answers %s with a documented error', async (_label, rawBody, status, body) => {
    const res = await request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: key, rawBody, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(status);
    expect(res.body).toEqual(body);
  });

  it('refuses an oversized body with 413 in the error shape', async () => {
    const res = await create({ ...validLink, Description: 'x'.repeat(2 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ status: 'failed', statusCode: '413', message: 'The request body is too large.' });
  });

  it('refuses a body that is not JSON with 415', async () => {
    const res = await request(t.baseUrl, 'POST', '/checkout/links/create', {
      apiKey: key,
      rawBody: 'Name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ status: 'failed', statusCode: '415', message: 'Content-Type must be application/json.' });
  });

  describe('state machine', () => {
    let id: number;
    beforeAll(async () => {
      id = (await create(validLink)).body.data.paymentLink.id;
    });

    const patch = (path: string, apiKey = key) => request(t.baseUrl, 'PATCH', path, { apiKey });
    const fetchOne = async () => (await request(t.baseUrl, 'GET', `/checkout/links/all?id=${id}`, { apiKey: key })).body[0];

    it('disables and re-activates, answering data null', async () => {
      const disabled = await patch(`/checkout/links/${id}/status/disable`);
      expect(disabled.status).toBe(200);
      expect(disabled.body).toEqual({ data: null, status: 'success', statusCode: '00', message: 'Payment link status updated successfully' });
      expect((await fetchOne()).isActive).toBe(false);
      const activated = await patch(`/checkout/links/${id}/status/activate`);
      expect(activated.body).toEqual({ data: null, status: 'success', statusCode: '00', message: 'Payment link status updated successfully' });
      expect((await fetchOne()).isActive).toBe(true);
    });

    it.each(['activate', 'disable'])('answers 404 code 02 for an unknown id on %s', async (action) => {
      for (const badId of ['999999999', 'abc']) {
        const res = await patch(`/checkout/links/${badId}/status/${action}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ status: 'failed', statusCode: '02', message: 'payment link not found' });
      }
    });

    it("cannot touch another merchant's link, nor the other environment's", async () => {
      const other = await createTestMerchant(t);
      for (const apiKey of [other.keys.test.privateKey, m.keys.live.privateKey]) {
        const res = await patch(`/checkout/links/${id}/status/disable`, apiKey);
        expect(res.body).toEqual({ status: 'failed', statusCode: '02', message: 'payment link not found' });
        const edit = await request(t.baseUrl, 'PATCH', `/checkout/links/${id}/edit`, { apiKey, body: { Name: 'x', Description: 'y', PaymentType: 'SC' } });
        expect(edit.status).toBe(404);
        const list = await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey });
        expect(list.body.map((l: { id: number }) => l.id)).not.toContain(id);
      }
      expect((await fetchOne()).isActive).toBe(true);
    });

    it('edits fields only and returns the link', async () => {
      const res = await request(t.baseUrl, 'PATCH', `/checkout/links/${id}/edit`, {
        apiKey: key,
        body: { Name: 'Gym (edited)', Description: 'New text', PaymentType: 'MC', Amount: '7500.50' },
      });
      expect(res.status).toBe(200);
      expect(res.body.statusCode).toBe('00');
      expect(res.body.message).toBe('Payment details fetched successfully');
      expect(res.body.data.paymentLink).toMatchObject({
        id,
        name: 'Gym (edited)',
        description: 'New text',
        amount: 7500.5,
        paymentLinkCode: 'MC',
        isActive: true,
        currency: 'NGN',
      });
    });

    it('ignores Currency on edit (unknown there), and the link keeps its currency', async () => {
      const res = await request(t.baseUrl, 'PATCH', `/checkout/links/${id}/edit`, {
        apiKey: key,
        body: { Name: 'a', Description: 'b', PaymentType: 'SC', Currency: 'USD' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.paymentLink).toMatchObject({ id, name: 'a', currency: 'NGN' });
    });
  });

  describe('keys', () => {
    const FORBIDDEN_BODY = { status: 'failed', statusCode: '403', message: 'This operation requires the private key.' };

    it('the public key cannot create, edit, activate or disable a link (403), and changes nothing', async () => {
      const link = (await create(validLink)).body.data.paymentLink;
      const pub = m.keys.test.publicKey;
      const attempts = [
        await create({ ...validLink, Name: 'Phishing' }, pub),
        await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/edit`, {
          apiKey: pub,
          body: { Name: 'x', Description: 'y', PaymentType: 'SC', AuthOption: 'NOAUTH', Amount: '1.00', Website: 'https://phishing.example' },
        }),
        await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/disable`, { apiKey: pub }),
        await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/activate`, { apiKey: pub }),
        // For an id that does not exist too: the key is refused before any lookup.
        await request(t.baseUrl, 'PATCH', `/checkout/links/999999999/status/disable`, { apiKey: pub }),
      ];
      for (const res of attempts) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual(FORBIDDEN_BODY);
      }
      const [after] = (await request(t.baseUrl, 'GET', `/checkout/links/all?id=${link.id}`, { apiKey: pub })).body;
      expect(after).toMatchObject({ name: link.name, amount: link.amount, isActive: true });
    });

    it('either key lists the links', async () => {
      const fresh = await createTestMerchant(t);
      const made = (await create(validLink, fresh.keys.test.privateKey)).body.data.paymentLink;
      for (const apiKey of [fresh.keys.test.publicKey, fresh.keys.test.privateKey]) {
        const list = await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey });
        expect(list.status).toBe(200);
        expect(list.body.map((l: { id: number }) => l.id)).toEqual([made.id]);
      }
    });
  });

  describe('list', () => {
    it('returns a bare array of list items, newest first, with the type name in paymentType', async () => {
      const fresh = await createTestMerchant(t);
      const k = fresh.keys.test.privateKey;
      expect((await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: k })).body).toEqual([]);
      const first = (await create({ ...validLink, Name: 'first' }, k)).body.data.paymentLink;
      const second = (await create({ ...validLink, Name: 'second', PaymentType: 'SUB' }, k)).body.data.paymentLink;
      const res = await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: k });
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body).toEqual([
        { ...second, paymentType: 'Subscription Payments', paymentLinkType: null, paymentLinkCode: null },
        { ...first, paymentType: 'Single Charge', paymentLinkType: null, paymentLinkCode: null },
      ]);
      const one = await request(t.baseUrl, 'GET', `/checkout/links/all?id=${first.id}`, { apiKey: k });
      expect(one.body).toEqual([{ ...first, paymentType: 'Single Charge', paymentLinkType: null, paymentLinkCode: null }]);
      const none = await request(t.baseUrl, 'GET', '/checkout/links/all?id=999999999', { apiKey: k });
      expect(none.status).toBe(404);
      expect(none.body).toEqual({ status: 'failed', status_code: '13', message: 'Order not found at the moment' });
    });
  });

  it('lists the link types', async () => {
    const res = await request(t.baseUrl, 'GET', '/checkout/links/types', { apiKey: key });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['paymentLinkTypes', 'status', 'statusCode', 'message']);
    expect(res.body).toMatchObject({ status: 'success', statusCode: '00', message: 'Payment link types retrieved successfully' });
    expect(res.body.paymentLinkTypes.map((x: any) => [x.id, x.code, x.paymentLinkName])).toEqual([
      [1, 'SC', 'Single Charge'],
      [2, 'MC', 'Multiple Charge'],
      [5, 'SUB', 'Subscription Payments'],
    ]);
    expect(res.body.paymentLinkTypes[0]).toEqual({
      paymentLinkName: 'Single Charge',
      description: expect.any(String),
      status: true,
      code: 'SC',
      id: 1,
      dateCreated: '2024-01-01T00:00:00.000',
      dateUpdated: null,
      dateDeleted: null,
      createdBy: 1,
      updatedBy: null,
      deletedBy: null,
    });
  });

  it('lists the frequencies in Envelope A', async () => {
    const res = await request(t.baseUrl, 'GET', '/checkout/frequencies', { apiKey: key });
    expect(res.body).toMatchObject({ status: 'success', statusCode: '00', message: 'Operation successful' });
    expect(res.body.data).toHaveLength(11);
    expect(res.body.data[5]).toEqual({
      hours: 720,
      days: 30,
      name: 'Monthly',
      description: expect.any(String),
      isActive: true,
      id: 6,
      dateCreated: '2024-01-01T00:00:00.000',
      dateUpdated: null,
      dateDeleted: null,
      createdBy: 1,
      updatedBy: null,
      deletedBy: null,
    });
  });

  it('lists the banks in Envelope A', async () => {
    const res = await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: key });
    expect(res.body).toMatchObject({ status: 'success', statusCode: '00', message: 'Operation successful' });
    expect(res.body.data[0]).toEqual({
      name: 'Access Bank',
      countryId: 566,
      bankCode: '044',
      isMicrofinance: false,
      isMortgage: false,
      ussdBankCode: '*901#',
      logo: `${t.config.publicUrl}/assets/banks/044.svg`,
      id: 1,
      dateCreated: '2024-01-01T00:00:00.000',
      dateUpdated: null,
      dateDeleted: null,
      createdBy: 1,
      updatedBy: null,
      deletedBy: null,
    });
    const logo = await fetch(`${t.baseUrl}/assets/banks/044.svg`);
    expect(logo.headers.get('content-type')).toContain('image/svg+xml');
  });

  describe('Idempotency-Key', () => {
    it('replays the stored answer for the same key and body, without creating twice', async () => {
      const fresh = await createTestMerchant(t);
      const k = fresh.keys.test.privateKey;
      const headers = { 'idempotency-key': 'link-create-1' };
      const [a, b] = await Promise.all([create(validLink, k, headers), create(validLink, k, headers)]);
      const c = await create(validLink, k, headers);
      expect(a.status).toBe(200);
      expect(b.body).toEqual(a.body);
      expect(c.body).toEqual(a.body);
      expect(c.headers.get('idempotent-replayed')).toBe('true');
      expect((await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: k })).body).toHaveLength(1);
    });

    it('refuses the same key with a different body', async () => {
      const headers = { 'idempotency-key': 'link-create-2' };
      await create(validLink, key, headers);
      const res = await create({ ...validLink, Name: 'Other' }, key, headers);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ status: 'failed', statusCode: '422', message: 'This Idempotency-Key was already used with a different request.' });
    });

    it('scopes keys to the merchant and environment', async () => {
      const headers = { 'idempotency-key': 'shared-key' };
      const a = await create(validLink, m.keys.test.privateKey, headers);
      const b = await create(validLink, m.keys.live.privateKey, headers);
      expect(b.body.data.paymentLink.id).not.toBe(a.body.data.paymentLink.id);
    });

    it('stores documented failures too', async () => {
      const headers = { 'idempotency-key': 'bad-body' };
      const a = await create({ Description: 'x' }, key, headers);
      const b = await create({ Description: 'x' }, key, headers);
      expect(a.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Name field is required.' });
      expect(b.body).toEqual(a.body);
      expect(b.headers.get('idempotent-replayed')).toBe('true');
    });

    it('does not store a refusal of the key: the same Idempotency-Key then works with the right key', async () => {
      const fresh = await createTestMerchant(t);
      const headers = { 'idempotency-key': 'wrong-key-first' };
      const refused = await create(validLink, fresh.keys.test.publicKey, headers);
      expect(refused.status).toBe(403);
      const again = await create(validLink, fresh.keys.test.publicKey, headers);
      expect(again.status).toBe(403);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      const created = await create(validLink, fresh.keys.test.privateKey, headers);
      expect(created.status).toBe(200);
      expect(created.headers.get('idempotent-replayed')).toBeNull();
      expect(created.body.data.paymentLink.name).toBe(validLink.Name);
      expect((await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: fresh.keys.test.privateKey })).body).toHaveLength(1);
    });

    it('refuses a malformed key', async () => {
      const res = await create(validLink, key, { 'idempotency-key': 'x'.repeat(300) });
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.' });
    });
  });

  it('serves an OpenAPI description generated from the route schemas', async () => {
    const res = await request(t.baseUrl, 'GET', '/docs/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/checkout/links/create',
        '/checkout/links/{id}/edit',
        '/checkout/links/{id}/status/activate',
        '/checkout/links/{id}/status/disable',
        '/checkout/links/all',
        '/checkout/links/types',
        '/checkout/frequencies',
        '/checkout/order/create',
        '/checkout/order/fee',
        '/checkout/order/status',
        '/checkout/order/event/track',
        '/checkout/order/verify',
        '/checkout/banks',
      ]),
    );
    expect(res.body.paths['/checkout/links/create'].post.requestBody.content['application/json'].schema.properties.Name).toBeDefined();
  });
});
