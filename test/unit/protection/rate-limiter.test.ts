import { FixedWindowCounter } from '../../../src/protection/rate-limiter';
import { clientIdentity } from '../../../src/protection/client-address';

describe('FixedWindowCounter', () => {
  it('allows `limit` events per window and names the seconds left', () => {
    let now = 1_000_000;
    const c = new FixedWindowCounter(3, 60_000, 100, () => now);
    expect([c.hit('a'), c.hit('a'), c.hit('a')].every((v) => v.allowed)).toBe(true);
    now += 20_500;
    expect(c.hit('a')).toEqual({ allowed: false, retryAfterSeconds: 40 });
    expect(c.check('a')).toEqual({ allowed: false, retryAfterSeconds: 40 });
    expect(c.hit('b').allowed).toBe(true);
    now += 39_500;
    expect(c.hit('a').allowed).toBe(true);
  });

  it('check() does not count, has() tells a live window', () => {
    let now = 0;
    const c = new FixedWindowCounter(1, 1000, 100, () => now);
    expect(c.check('k').allowed).toBe(true);
    expect(c.has('k')).toBe(false);
    c.hit('k');
    expect(c.has('k')).toBe(true);
    expect(c.check('k').allowed).toBe(false);
    now = 1000;
    expect(c.has('k')).toBe(false);
  });

  it('memory stays bounded under a flood of distinct keys', () => {
    let now = 0;
    const c = new FixedWindowCounter(5, 60_000, 1000, () => now);
    for (let i = 0; i < 50_000; i++) c.hit(`ip-${i}`);
    expect(c.size).toBeLessThanOrEqual(1000);
    // Expired windows are swept as time passes.
    now = 61_000;
    c.hit('late');
    expect(c.size).toBe(1);
  });
});

describe('clientIdentity', () => {
  it('IPv4 counts alone, IPv4-mapped like IPv4, IPv6 by its /64', () => {
    expect(clientIdentity('203.0.113.7')).toBe('203.0.113.7');
    expect(clientIdentity('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientIdentity('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientIdentity('2001:db8:1:2:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientIdentity('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientIdentity('::1')).toBe('0:0:0:0::/64');
    expect(clientIdentity(undefined)).toBe('unknown');
  });
});
