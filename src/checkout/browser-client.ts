import fs from 'node:fs';
import path from 'node:path';

/**
 * The merchant SDK's encryption module (packages/sdk/src/encryption), served to the browser
 * as-is inside a tiny CommonJS shim: the checkout page and merchants encrypt with the same
 * code. Compiled output is used when present (npm start); from the TypeScript source it is
 * transpiled once (development and tests).
 */
export function browserClientScript(): string {
  const compiled = path.join(__dirname, '..', '..', 'packages', 'sdk', 'src', 'encryption.js');
  let code: string;
  if (fs.existsSync(compiled)) {
    code = fs.readFileSync(compiled, 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/m, '');
  } else {
    const ts = require('typescript') as typeof import('typescript');
    const source = fs.readFileSync(path.join(__dirname, '..', '..', 'packages', 'sdk', 'src', 'encryption.ts'), 'utf8');
    code = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2017, esModuleInterop: true },
    }).outputText;
  }
  return `(function () {
  var module = { exports: {} }, exports = module.exports;
  function require(name) {
    if (name === 'node-forge') return window.forge;
    throw new Error('unavailable in the browser: ' + name);
  }
${code}
  window.PgwClient = module.exports;
})();
`;
}

export function forgeScriptPath(): string {
  return require.resolve('node-forge/dist/forge.min.js');
}
