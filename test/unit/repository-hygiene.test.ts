import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * A clone of the repository must be complete on its own: no comment, doc or test may send the
 * reader to a file outside it. The API is described in docs/api.md and the other docs/ files.
 * A parent-relative path to a `shared` folder is allowed only where it resolves inside the
 * repository (imports of src/shared). The patterns are assembled from pieces so that this file does not match itself.
 */
const FORBIDDEN_NAMES = [['contract', 'md'].join('.'), ['checkout-api', 'md'].join('.')];
const PARENT_SHARED = new RegExp(['(?:\\.\\./)+', 'shared'].join(''), 'g');

const ROOT = path.join(__dirname, '..', '..');
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.data', 'coverage', 'test-results']);

/** The files git tracks (a fresh clone's content); without git, every file but the skipped folders. */
function trackedFiles(): string[] {
  try {
    const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.split('\0').filter((f) => f !== '' && !f.split('/').some((part) => SKIPPED_DIRS.has(part)));
  } catch {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        if (SKIPPED_DIRS.has(entry.name)) continue;
        const rel = dir ? `${dir}/${entry.name}` : entry.name;
        if (entry.isDirectory()) walk(rel);
        else if (entry.isFile()) files.push(rel);
      }
    };
    walk('');
    return files;
  }
}

/** True when a parent-relative path to `shared`, written in `file`, leads to a folder inside the repository. */
function insideRepository(file: string, relative: string): boolean {
  const target = path.resolve(ROOT, path.dirname(file), relative);
  return target.startsWith(ROOT + path.sep) && fs.existsSync(target);
}

/** `file:line: text` for each line that names a file outside the repository. */
export function outsideReferences(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const lower = line.toLowerCase();
    const named = FORBIDDEN_NAMES.some((name) => lower.includes(name));
    const parent = [...line.matchAll(PARENT_SHARED)].some((m) => !insideRepository(file, m[0]));
    if (named || parent) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`);
  });
  return found;
}

describe('repository hygiene', () => {
  it('recognises a reference to a file outside the repository', () => {
    const outside = ['..', 'shared', 'spec', FORBIDDEN_NAMES[1]].join('/');
    expect(outsideReferences('docs/x.md', `see ${outside}`)).toEqual([`docs/x.md:1: see ${outside}`]);
    expect(outsideReferences('src/rest/x.ts', `ok\n// as ${FORBIDDEN_NAMES[0].toUpperCase()} says`)).toEqual([
      `src/rest/x.ts:2: // as ${FORBIDDEN_NAMES[0].toUpperCase()} says`,
    ]);
    expect(outsideReferences('README.md', ['..', 'shared', 'style.md'].join('/'))).toHaveLength(1);
    // An import of src/shared from inside src/ resolves within the repository.
    const inside = ['..', 'shared', 'errors'].join('/');
    expect(outsideReferences('src/rest/x.ts', `import { DomainError } from '${inside}'; // docs/api.md`)).toEqual([]);
    expect(outsideReferences('src/graphql/links/x.ts', `from '../${inside}'`)).toEqual([]);
  });

  it('no tracked file points at a file outside the repository (cite docs/ instead)', () => {
    const files = trackedFiles();
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) => {
      const full = path.join(ROOT, file);
      if (!fs.existsSync(full) || !fs.statSync(full).isFile()) return [];
      return outsideReferences(file, fs.readFileSync(full, 'utf8'));
    });
    expect(found).toEqual([]);
  });

  it('test titles say the behaviour, never a tracker reference such as "issue 11 point 6"', () => {
    const reference = /(?:^|\()\s*(?:issue \d+|points? \d+)/i;
    expect(
      trackerTitles(
        'x.test.ts',
        `it('refuses a body over the limit', () => {}); it.each([1])('${['issue', '11 point 6'].join(' ')}: accepts %s', () => {});`,
        reference,
      ),
    ).toEqual([`x.test.ts:1: ${['issue', '11 point 6'].join(' ')}: accepts %s`]);
    expect(
      trackerTitles('x.test.ts', `describe('rate limits (${['point', '15'].join(' ')})', () => {}); it('issues 4096-bit keys', () => {});`, reference),
    ).toEqual([`x.test.ts:1: rate limits (${['point', '15'].join(' ')})`]);
    const found = trackedFiles()
      .filter((file) => file.endsWith('.test.ts') && fs.existsSync(path.join(ROOT, file)))
      .flatMap((file) => trackerTitles(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), reference));
    expect(found).toEqual([]);
  });
});

/** The titles of it/test/describe calls (with .each, .skip, .only) that match `reference`, as file:line: title. */
function trackerTitles(file: string, text: string, reference: RegExp): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.arguments.length > 0) {
      let callee: ts.Expression = node.expression;
      while (ts.isPropertyAccessExpression(callee) || ts.isCallExpression(callee)) callee = callee.expression;
      const title = node.arguments[0]!;
      if (
        ts.isIdentifier(callee) &&
        ['it', 'test', 'describe'].includes(callee.text) &&
        (ts.isStringLiteral(title) || ts.isNoSubstitutionTemplateLiteral(title))
      ) {
        if (reference.test(title.text)) found.push(`${file}:${source.getLineAndCharacterOfPosition(title.getStart(source)).line + 1}: ${title.text}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
