import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');

/** The TypeScript and JavaScript files git tracks in the folders that can use src/. */
function codeFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', 'src', 'test', 'bench', 'scripts', 'packages', 'web', 'migrations'], { cwd: ROOT, encoding: 'utf8' });
  return out.split('\0').filter((f) => /\.(ts|tsx|js|mjs|cjs)$/.test(f));
}

/** How often each identifier occurs in the code of `text` (comments and strings left out). */
function identifierCounts(text: string, file: string): Map<string, number> {
  const counts = new Map<string, number>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) counts.set(node.text, (counts.get(node.text) ?? 0) + 1);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : undefined));
  return counts;
}

/** The names a file exports by declaration (`export function|class|const|type|interface|enum NAME`), default exports aside. */
function exportedNames(text: string, file: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const names: string[] = [];
  for (const statement of source.statements) {
    const modifiers = ts.canHaveModifiers(statement) ? (ts.getModifiers(statement) ?? []) : [];
    // A default export is reached by its module, not by its name (a worker script, say).
    if (!modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) || modifiers.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword)) continue;
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    }
  }
  return names;
}

describe('src/ exports no dead code', () => {
  it('every name a file of src/ exports is used: by another file (code, tests, benchmarks, scripts) or in its own file', () => {
    const files = codeFiles();
    const counts = new Map(files.map((f) => [f, identifierCounts(fs.readFileSync(path.join(ROOT, f), 'utf8'), f)]));
    const dead: string[] = [];
    for (const file of files.filter((f) => f.startsWith('src/') && /\.tsx?$/.test(f))) {
      for (const name of exportedNames(fs.readFileSync(path.join(ROOT, file), 'utf8'), file)) {
        const elsewhere = files.some((other) => other !== file && counts.get(other)!.has(name));
        if (!elsewhere && (counts.get(file)!.get(name) ?? 0) <= 1) dead.push(`${file}: ${name}`);
      }
    }
    expect(dead).toEqual([]);
  });
});
