import { TenantCaches } from '../../../src/merchants/tenant-cache';

describe('TenantCaches', () => {
  let now = 0;
  const caches = (options: { ttlMs?: number; hearing?: () => boolean } = {}) =>
    new TenantCaches({ ttlMs: options.ttlMs ?? 1000, now: () => now, hearing: options.hearing });

  beforeEach(() => (now = 1_000_000));

  it('loads once, serves from memory until the TTL, then loads again', async () => {
    const c = caches().create<string>();
    let loads = 0;
    const load = async () => ({ value: `v${(loads += 1)}`, environmentId: 1 });
    expect(await c.get('k', load)).toBe('v1');
    expect(await c.get('k', load)).toBe('v1');
    now += 999;
    expect(await c.get('k', load)).toBe('v1');
    now += 1;
    expect(await c.get('k', load)).toBe('v2');
    expect(loads).toBe(2);
  });

  it('shares one load among concurrent askers, and never keeps a null', async () => {
    const c = caches().create<string>();
    let loads = 0;
    const load = async () => {
      loads += 1;
      await new Promise((r) => setTimeout(r, 10));
      return null;
    };
    expect(await Promise.all([c.get('k', load), c.get('k', load), c.get('k', load)])).toEqual([null, null, null]);
    expect(loads).toBe(1);
    expect(c.size).toBe(0);
  });

  it('drops entries by environment, by merchant, or all, on every cache', async () => {
    const owner = caches();
    const a = owner.create<string>();
    const b = owner.create<string>();
    await a.get(1, async () => ({ value: 'env1', environmentId: 1, subsidiaryId: 10 }));
    await a.get(2, async () => ({ value: 'env2', environmentId: 2, subsidiaryId: 20 }));
    await b.get(10, async () => ({ value: 'sub10', subsidiaryId: 10 }));
    owner.invalidate({ environmentId: 2 });
    expect([a.size, b.size]).toEqual([1, 1]);
    owner.invalidate({ subsidiaryId: 10 });
    expect([a.size, b.size]).toEqual([0, 0]);
    await a.get(1, async () => ({ value: 'env1', environmentId: 1 }));
    owner.invalidate();
    expect(a.size).toBe(0);
  });

  it('answers but does not keep a load that an invalidation overtook', async () => {
    const owner = caches();
    const c = owner.create<string>();
    let release!: () => void;
    const pending = c.get('k', () => new Promise((resolve) => (release = () => resolve({ value: 'old', environmentId: 1 }))));
    owner.invalidate({ environmentId: 99 }); // any invalidation meanwhile
    release();
    expect(await pending).toBe('old');
    expect(c.size).toBe(0);
    expect(await c.get('k', async () => ({ value: 'new', environmentId: 1 }))).toBe('new');
  });

  it('is emptied and bypassed while changes might go unheard, and with a TTL of 0', async () => {
    let hearing = true;
    const owner = caches({ hearing: () => hearing });
    const c = owner.create<string>();
    await c.get('k', async () => ({ value: 'v1' }));
    hearing = false;
    expect(await c.get('k', async () => ({ value: 'v2' }))).toBe('v2');
    expect(c.size).toBe(0);
    hearing = true;
    expect(await c.get('k', async () => ({ value: 'v3' }))).toBe('v3');

    const off = caches({ ttlMs: 0 }).create<string>();
    await off.get('k', async () => ({ value: 'x' }));
    expect(off.size).toBe(0);
  });
});
