import { loadConfig, ConfigError } from '../../../src/config';
import { isDatabaseUnavailable } from '../../../src/db/unavailable';
import { scrubText, scrubValue } from '../../../src/observability/logging';
import { LabelGuard } from '../../../src/observability/metrics';
import { CachedReading } from '../../../src/observability/gauges';

describe('METRICS_TOKEN', () => {
  it('is optional, and refused when short or spaced', () => {
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: 'a-long-enough-metrics-token' }).metricsToken).toBe('a-long-enough-metrics-token');
    for (const bad of ['short', 'has a space in it somewhere']) {
      expect(() => loadConfig({ METRICS_TOKEN: bad })).toThrow(ConfigError);
    }
  });
});

describe('isDatabaseUnavailable', () => {
  it('knows lost and refused connections, through wrappers', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: refused }))).toBe(true);
    expect(isDatabaseUnavailable({ originalError: new Error('Connection terminated unexpectedly') })).toBe(true);
    // graphql-js's wrapper of a value thrown from another realm.
    expect(isDatabaseUnavailable({ name: 'NonErrorThrown', thrownValue: { errno: -104, code: 'ECONNRESET', syscall: 'read' } })).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('the database system is shutting down'), { code: '57P03' }))).toBe(true);
    expect(
      isDatabaseUnavailable(Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' })),
    ).toBe(true);
    // A statement sent on a transaction whose connection was lost mid-way (the ORM's wrapper).
    expect(isDatabaseUnavailable({ name: 'DriverException', message: 'Transaction query already complete, run with DEBUG=knex:tx for more info' })).toBe(true);
  });
  it('does not take a query fault for an outage', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});

describe('log scrubbing', () => {
  it('masks Luhn-valid card numbers, api keys, webhook secrets and hex keys in text, and leaves other numbers', () => {
    expect(scrubText('card 4111 1111 1111 1111 and 4111-1111-1111-1111 and 4111111111111111')).toBe('card [redacted] and [redacted] and [redacted]');
    expect(scrubText('order 1234567890123 took 1700000000000 ms')).toBe('order 1234567890123 took 1700000000000 ms');
    expect(scrubText('key PGW-SECRETKEY-TEST-0123456789abcdef0123456789abcdef!')).toBe('key [redacted]!');
    expect(scrubText('whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=')).toBe('[redacted]');
    expect(scrubText(`mk ${'ab'.repeat(32)}`)).toBe('mk [redacted]');
  });
  it('censors secret fields at any depth, and survives cycles', () => {
    const cyclic: Record<string, unknown> = { deep: { deeper: { cvv: '123', Authorization: 'x', list: [{ privateKey: 'k' }] } } };
    cyclic.self = cyclic;
    expect(scrubValue(cyclic)).toEqual({
      deep: { deeper: { cvv: '[redacted]', Authorization: '[redacted]', list: [{ privateKey: '[redacted]' }] } },
      self: '[…]',
    });
  });
});

describe('LabelGuard', () => {
  it('keeps plain operation names up to a bound, the rest as other', () => {
    const guard = new LabelGuard(2);
    expect(guard.label(undefined)).toBe('anonymous');
    expect(guard.label('A')).toBe('A');
    expect(guard.label('B')).toBe('B');
    expect(guard.label('C')).toBe('other');
    expect(guard.label('A')).toBe('A');
    expect(guard.label('bad name"}')).toBe('other');
  });
});

describe('CachedReading', () => {
  it('reads once per interval, shared by concurrent readers, and forgets a failure', async () => {
    let reads = 0;
    let fail = false;
    const cached = new CachedReading(60_000, async () => {
      reads += 1;
      if (fail) throw new Error('down');
      return reads;
    });
    expect(await Promise.all([cached.get(), cached.get(), cached.get()])).toEqual([1, 1, 1]);
    expect(await cached.get()).toBe(1);
    expect(reads).toBe(1);
    const expired = new CachedReading(0, async () => {
      reads += 1;
      if (fail) throw new Error('down');
      return reads;
    });
    fail = true;
    expect(await expired.get()).toBeUndefined();
    fail = false;
    expect(await expired.get()).toBe(reads);
  });
});
