import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The shape of src/, checked on every run: no import cycle between files, no file over
 * MAX_LINES, and an import from a lower layer to a higher one only where ALLOWED_UPWARD names it
 * with its reason. CONTRIBUTING.md ("Layers") explains the picture; this is its enforcement.
 *
 * Only imports that exist at run time count: `import type`, `export type` and imports whose
 * every name is marked `type` are erased by the compiler and cannot make a cycle.
 */

const SRC = path.resolve(__dirname, '..', '..', 'src');
const MAX_LINES = 450;

/** Top folder of src/ (or root file) → layer, lowest first. A file may import its own folder and lower layers. */
const LAYERS: Record<string, number> = {
  shared: 1,
  crypto: 2,
  db: 2,
  observability: 2,
  mail: 2,
  merchants: 3,
  fees: 4,
  banks: 4,
  links: 4,
  orders: 5,
  timeline: 6,
  events: 6,
  idempotency: 6,
  payments: 7,
  protection: 8,
  operations: 8,
  rest: 9,
  graphql: 9,
  checkout: 9,
  dashboard: 9,
  site: 9,
  cli: 9,
  // The composition root: files directly in src/ (the app context, the app, bootstrap, main,
  // the entity registry) wire every layer together.
  '.': 10,
};

/** Read-only settings: any layer may import them. */
const IMPORTABLE_FROM_ANYWHERE = new Set(['config.ts']);

/**
 * The imports from a lower layer to a higher one that are accepted, each with why. Paths are
 * relative to src/. Keep it short: a new entry needs a reason a reviewer agrees with, and the
 * same reason in CONTRIBUTING.md.
 */
const ALLOWED_UPWARD: { from: string; to: string; reason: string }[] = [
  {
    from: 'cli/main.ts',
    to: 'bootstrap.ts',
    reason: 'the CLI is a process entry point like main.ts: it boots the same application context to run its commands',
  },
  {
    from: 'links/link-usage.ts',
    to: 'orders/order-status.ts',
    reason: 'a link is used up by its paid orders; the order status vocabulary is a leaf (it imports only shared/), so this cannot close a cycle',
  },
];

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts') && !d.name.endsWith('.d.ts'))
    .map((d) => path.join(d.parentPath, d.name))
    .sort();
}

function rel(file: string): string {
  return path.relative(SRC, file).split(path.sep).join('/');
}

function resolveImport(from: string, specifier: string): string | undefined {
  const target = path.resolve(path.dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, path.join(target, 'index.ts')]) {
    if (candidate.endsWith('.ts') && fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** The relative modules a file needs at run time (type-only imports and exports left out). */
function runtimeImports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly) continue;
      const bindings = clause?.namedBindings;
      const onlyTypeNames =
        clause !== undefined &&
        clause.name === undefined &&
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((e) => e.isTypeOnly);
      if (onlyTypeNames) continue;
      specifiers.push(statement.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      if (statement.isTypeOnly) continue;
      const clause = statement.exportClause;
      if (clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly)) continue;
      specifiers.push(statement.moduleSpecifier.text);
    }
  }
  const targets = new Set<string>();
  for (const specifier of specifiers) {
    if (!specifier.startsWith('.')) continue;
    const target = resolveImport(file, specifier);
    if (target === undefined) throw new Error(`${rel(file)}: cannot resolve '${specifier}'`);
    targets.add(target);
  }
  return [...targets];
}

/** Strongly connected components of more than one file (or a file importing itself): Tarjan. */
function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** One concrete loop through a component, for the failure message: a → b → … → a. */
function loopThrough(graph: Graph, component: string[]): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const loop = [start];
        for (let at = v; at !== start; at = cameFrom.get(at)!) loop.splice(1, 0, at);
        return [...loop, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return component;
}

function folderOf(relative: string): string {
  const parts = relative.split('/');
  return parts.length > 1 ? parts[0]! : '.';
}

const files = sourceFiles(SRC);
const texts = new Map(files.map((f) => [f, fs.readFileSync(f, 'utf8')]));
const graph: Graph = new Map(files.map((f) => [f, runtimeImports(f, texts.get(f)!)]));

describe('the structure of src/', () => {
  it('has no import cycle between files', () => {
    const found = cycles(graph).map((component) => loopThrough(graph, component).map(rel).join(' → '));
    if (found.length > 0) console.log(`Import cycles in src/ (${found.length}):\n  ${found.join('\n  ')}`);
    expect(found).toEqual([]);
  });

  it(`keeps every file at or below ${MAX_LINES} lines`, () => {
    const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const over = files.filter((f) => lineCount(texts.get(f)!) > MAX_LINES).map((f) => `${rel(f)}: ${lineCount(texts.get(f)!)} lines`);
    expect(over).toEqual([]);
  });

  it('gives every folder of src/ a layer', () => {
    const folders = [...new Set(files.map((f) => folderOf(rel(f))))].sort();
    expect(folders.filter((folder) => LAYERS[folder] === undefined)).toEqual([]);
  });

  it('imports from a lower layer to a higher one only where the allowed list names it, with its reason', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const from = rel(file);
      for (const target of targets) {
        const to = rel(target);
        if (IMPORTABLE_FROM_ANYWHERE.has(to)) continue;
        const fromLayer = LAYERS[folderOf(from)];
        const toLayer = LAYERS[folderOf(to)];
        if (fromLayer === undefined || toLayer === undefined) continue; // reported by the test above
        if (toLayer > fromLayer) upward.push(`${from} (layer ${fromLayer}) → ${to} (layer ${toLayer})`);
      }
    }
    upward.sort();
    if (upward.length > 0) console.log(`Upward imports in src/ (${upward.length}):\n  ${upward.join('\n  ')}`);
    const allowed = ALLOWED_UPWARD.map(({ from, to }) => `${from} (layer ${LAYERS[folderOf(from)]}) → ${to} (layer ${LAYERS[folderOf(to)]})`).sort();
    expect(ALLOWED_UPWARD.filter(({ reason }) => reason.trim() === '')).toEqual([]);
    expect(upward).toEqual(allowed);
  });

  it('lets folders of one layer import each other in one direction only', () => {
    const sideways: Graph = new Map();
    for (const [file, targets] of graph) {
      const from = folderOf(rel(file));
      for (const target of targets) {
        const to = folderOf(rel(target));
        if (from === to || IMPORTABLE_FROM_ANYWHERE.has(rel(target)) || LAYERS[from] === undefined || LAYERS[from] !== LAYERS[to]) continue;
        sideways.set(from, [...new Set([...(sideways.get(from) ?? []), to])]);
      }
    }
    expect(cycles(sideways).map((component) => loopThrough(sideways, component).join(' → '))).toEqual([]);
  });

  // The checks above are only as good as the import reading: prove it on known shapes.
  describe('reading imports', () => {
    const at = (name: string) => path.join(SRC, 'shared', name);
    it('counts value imports, re-exports and bare imports, and leaves out type-only ones', () => {
      const read = (text: string) => runtimeImports(at('probe.ts'), text).map(rel);
      expect(read(`import { DomainError } from './errors';`)).toEqual(['shared/errors.ts']);
      expect(read(`import { DomainError, type ErrorKind } from './errors';`)).toEqual(['shared/errors.ts']);
      expect(read(`export { DomainError } from './errors';`)).toEqual(['shared/errors.ts']);
      expect(read(`export * from './errors';`)).toEqual(['shared/errors.ts']);
      expect(read(`import './errors';`)).toEqual(['shared/errors.ts']);
      expect(read(`import type { DomainError } from './errors';`)).toEqual([]);
      expect(read(`import { type DomainError } from './errors';`)).toEqual([]);
      expect(read(`export type { DomainError } from './errors';`)).toEqual([]);
      expect(read(`import { Decimal } from 'decimal.js';`)).toEqual([]);
    });

    it('finds a cycle, names its files in order, and finds none in a chain', () => {
      const loop: Graph = new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a', 'd']],
        ['d', []],
      ]);
      const [component, ...others] = cycles(loop);
      expect(others).toEqual([]);
      expect(component).toEqual(['a', 'b', 'c']);
      expect(loopThrough(loop, component!)).toEqual(['a', 'b', 'c', 'a']);
      expect(
        cycles(
          new Map([
            ['a', ['b']],
            ['b', ['c']],
            ['c', []],
          ]),
        ),
      ).toEqual([]);
    });
  });
});
