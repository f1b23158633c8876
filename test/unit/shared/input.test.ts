import fc from 'fast-check';
import { readInput } from '../../../src/shared/input';
import { CreateOrderPlaintext, FeePlaintext, LinkCreateBody, PayPlaintext, TrackPlaintext } from '../../../src/rest/schemas';
import { DomainError } from '../../../src/shared/errors';

const link = { Name: 'Gym', Description: 'Monthly', PaymentType: 'SC', AuthOption: 'AUTH', Amount: '5000' };
const order = {
  customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
  order: { amount: 1000, reference: 'ORD-1', description: 'Two tickets', currency: 'NGN' },
  payment: { RedirectUrl: 'https://merchant.test/done' },
};

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return `${err.code} ${err.message}`;
    throw err;
  }
  return 'no error';
}

/** Every way of writing a name's letters in upper or lower case. */
const anyCasing = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));

describe('readInput: request bodies and plaintexts read by their schema', () => {
  it('names in any casing, at any depth, read as the schema names them', () => {
    fc.assert(
      fc.property(anyCasing('customer'), anyCasing('firstname'), anyCasing('payment'), anyCasing('RedirectUrl'), (c, f, p, r) => {
        const plaintext = {
          ...order,
          customer: undefined,
          payment: undefined,
          [c]: { ...order.customer, firstname: undefined, [f]: 'Ada' },
          [p]: { [r]: 'https://merchant.test/done' },
        };
        expect(readInput(CreateOrderPlaintext, JSON.parse(JSON.stringify(plaintext)))).toEqual(order);
      }),
    );
  });

  it('unknown properties are dropped, at every level', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => !['customer', 'order', 'payment', 'paymentmeta'].includes(k.toLowerCase()) && k !== '__proto__'),
          fc.jsonValue(),
        ),
        (extra) => {
          expect(readInput(CreateOrderPlaintext, { ...extra, ...order, customer: { ...order.customer, extra: 1 } })).toEqual(order);
        },
      ),
    );
  });

  it('reads an empty or blank string as absent, at any depth; a required one is reported missing', () => {
    expect(readInput(LinkCreateBody, { ...link, Mobile: '', Limit: '  ', Website: '', name: '' })).toEqual(link);
    expect(messageOf(() => readInput(LinkCreateBody, { ...link, Description: ' ' }))).toBe('VAL400 The Description field is required.');
    expect(readInput(CreateOrderPlaintext, { ...order, customer: { ...order.customer, mobile: '' }, paymentMeta: '' })).toEqual({
      ...order,
      customer: { firstname: 'Ada', lastname: 'Obi', country: 'NG', email: 'ada@example.test' },
    });
    expect(messageOf(() => readInput(CreateOrderPlaintext, { ...order, customer: { ...order.customer, email: '' } }))).toBe(
      'VAL400 The Email field is required.',
    );
    expect(readInput(PayPlaintext, { reference: 'R', paymentOption: 'C', country: 'NG', card: { cardNumber: '4111', billingAddress: '' } })).toEqual({
      reference: 'R',
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber: '4111' },
    });
    expect(messageOf(() => readInput(FeePlaintext, { amount: 1, paymentOption: '' }))).toBe('VAL400 payment option is required!');
  });

  it('reads a plaintext without mobile when email is given', () => {
    const { mobile: _mobile, ...customer } = order.customer;
    expect(readInput(CreateOrderPlaintext, { ...order, customer })).toEqual({ ...order, customer });
  });

  it('null is absent; a required null is reported missing', () => {
    expect(readInput(LinkCreateBody, { ...link, Mobile: null, Limit: null, name: null })).toEqual(link);
    expect(messageOf(() => readInput(LinkCreateBody, { ...link, AuthOption: null }))).toBe('VAL400 The AuthOption field is required.');
    expect(
      readInput(PayPlaintext, { reference: 'R', paymentOption: 'C', country: 'NG', card: { cardNumber: '4111', billingAddress: null }, paypal: null }),
    ).toEqual({
      reference: 'R',
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber: '4111' },
    });
  });

  it.each([
    [LinkCreateBody, { ...link, Name: ['a'] }, 'VAL400 The Name field must be a string.'],
    [LinkCreateBody, { ...link, Name: 'x'.repeat(201) }, 'VAL400 The Name field must be at most 200 characters.'],
    [LinkCreateBody, { ...link, Amount: true }, 'VAL400 The Amount field must be a number.'],
    [LinkCreateBody, { ...link, Name: 'a\u0000b' }, 'VAL400 The Name field is not valid.'],
    [LinkCreateBody, { ...link, Name: 'a\ud800b' }, 'VAL400 The Name field is not valid.'],
    [LinkCreateBody, { ...link, NAME: 'other' }, 'VAL400 The Name field is given more than once.'],
    [FeePlaintext, { amount: 1, paymentOption: 'C', PaymentMethod: 'C' }, 'VAL400 The PaymentOption field is given more than once.'],
    [LinkCreateBody, [link], 'VAL400 The request body must be a JSON object.'],
    [CreateOrderPlaintext, { ...order, customer: 'Ada' }, 'VAL400 The Customer field must be an object.'],
    [CreateOrderPlaintext, { ...order, customer: { ...order.customer, email: undefined } }, 'VAL400 The Email field is required.'],
    [FeePlaintext, { amount: 1 }, 'VAL400 payment option is required!'],
    [FeePlaintext, { paymentOption: 'C' }, 'VAL400 The Amount field is required.'],
  ])('answers %#: the legacy message', (schema, value, message) => {
    expect(messageOf(() => readInput(schema, value))).toBe(message);
  });

  it('reads paymentmethod as the paymentOption of fee and pay and eventname as the event of track, in any casing', () => {
    expect(readInput(FeePlaintext, { amount: 100, PaymentMethod: 'C' })).toEqual({ amount: 100, paymentOption: 'C' });
    expect(readInput(PayPlaintext, { reference: 'R', paymentmethod: 'PAYPAL', country: 'NG' })).toEqual({
      reference: 'R',
      paymentOption: 'PAYPAL',
      country: 'NG',
    });
    expect(readInput(TrackPlaintext, { orderReference: 'R', eventName: 'checkout.viewed' })).toEqual({ orderReference: 'R', event: 'checkout.viewed' });
  });

  it('does not read eventname or paymentmethod as the link Name or PaymentType', () => {
    expect(messageOf(() => readInput(LinkCreateBody, { eventname: 'Gym', description: 'Monthly', PaymentType: 'SC', authoption: 'AUTH' }))).toBe(
      'VAL400 The Name field is required.',
    );
    expect(messageOf(() => readInput(LinkCreateBody, { Name: 'Gym', description: 'Monthly', paymentmethod: 'SC', authoption: 'AUTH' }))).toBe(
      'VAL400 The PaymentType field is required.',
    );
  });
});
