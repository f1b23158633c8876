import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));

/**
 * `npm ci` on these machines runs Node 20: with `engine-strict` it refuses any locked package
 * whose `engines.node` excludes the running Node, so this fails first, naming the packages.
 */
describe('Node engines', () => {
  const lock = read('package-lock.json');
  const running = process.version;

  it('every package in package-lock.json accepts the Node that runs the tests', () => {
    const refusing = Object.entries<{ version?: string; engines?: { node?: string } | string[] }>(lock.packages)
      .filter(([, pkg]) => pkg.engines && !Array.isArray(pkg.engines) && typeof pkg.engines.node === 'string')
      .filter(([, pkg]) => !semver.satisfies(running, (pkg.engines as { node: string }).node, { includePrerelease: true }))
      .map(([where, pkg]) => `${where || '(root)'}@${pkg.version ?? ''} needs node ${(pkg.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });

  it('npm refuses an engine mismatch, and the project asks for the Node it is tested on', () => {
    const npmrc = fs.readFileSync(path.join(ROOT, '.npmrc'), 'utf8');
    expect(npmrc.split('\n').map((l) => l.trim())).toContain('engine-strict=true');
    const range = read('package.json').engines.node;
    expect(range).toBe('>=20.19');
    expect(lock.packages[''].engines.node).toBe(range);
    expect(semver.satisfies(running, range)).toBe(true);
  });

  it('pins cookie and @whatwg-node/promise-helpers to releases that run on Node 20', () => {
    expect(read('package.json').overrides).toEqual({ cookie: '1.1.1', '@whatwg-node/promise-helpers': '1.3.2' });
    const locked = (name: string) =>
      Object.entries<{ version: string }>(lock.packages)
        .filter(([where]) => where === `node_modules/${name}` || where.endsWith(`/node_modules/${name}`))
        .map(([, pkg]) => pkg.version);
    expect(locked('cookie')).toEqual(['1.1.1']);
    expect(locked('@whatwg-node/promise-helpers')).toEqual(['1.3.2']);
  });
});
