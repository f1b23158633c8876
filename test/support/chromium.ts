import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';

/**
 * The Chromium the browser tests drive (docs/testing.md, "Chromium"):
 *
 * 1. `CHROMIUM_PATH` set: that executable.
 * 2. Otherwise an installed Chromium: /usr/bin/chromium, or `chromium`, `chromium-browser`,
 *    `google-chrome` on PATH.
 * 3. Otherwise the headless Chromium shipped inside the `@sparticuz/chromium` npm package,
 *    unpacked once per version into the system's temporary directory, with the few shared
 *    libraries and fonts the package carries for machines that have none.
 *
 * `TEST_CHROMIUM=package` skips step 2 (the packaged one even where one is installed).
 *
 * The result goes to the test processes through `CHROMIUM_PATH` and, for the packaged one,
 * `CHROMIUM_LIBRARY_PATH` and `CHROMIUM_FONTCONFIG_PATH` (test/support/browser.ts).
 */
export interface ResolvedChromium {
  path: string;
  source: 'given' | 'installed' | 'package';
  env: Record<string, string>;
}

export function resolveChromium(env: NodeJS.ProcessEnv = process.env): ResolvedChromium {
  if (env.CHROMIUM_PATH) return { path: env.CHROMIUM_PATH, source: 'given', env: {} };
  const mode = env.TEST_CHROMIUM ?? 'auto';
  if (mode !== 'auto' && mode !== 'package') throw new Error(`TEST_CHROMIUM must be "auto" or "package", not ${mode}`);
  const installed = mode === 'auto' ? findInstalled(env.PATH ?? '') : undefined;
  if (installed) return { path: installed, source: 'installed', env: {} };
  return unpackPackagedChromium();
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findInstalled(searchPath: string): string | undefined {
  if (isExecutableFile('/usr/bin/chromium')) return '/usr/bin/chromium';
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Unpacks @sparticuz/chromium's brotli archives into `<tmp>/pgw-chromium-<version>` once. */
function unpackPackagedChromium(): ResolvedChromium {
  let pkgJson: string;
  try {
    pkgJson = require.resolve('@sparticuz/chromium/package.json');
  } catch {
    // The package's exports hide package.json; its entry point sits in build/cjs.
    try {
      pkgJson = path.join(path.dirname(require.resolve('@sparticuz/chromium')), '..', '..', 'package.json');
    } catch {
      throw new Error('no Chromium for the browser tests: CHROMIUM_PATH is unset, none is installed, and @sparticuz/chromium is not installed (run npm ci)');
    }
  }
  const pkgDir = path.dirname(pkgJson);
  const { version } = JSON.parse(fs.readFileSync(pkgJson, 'utf8')) as { version: string };
  const bin = path.join(pkgDir, 'bin');
  const target = path.join(os.tmpdir(), `pgw-chromium-${version}`);
  const result: ResolvedChromium = {
    path: path.join(target, 'chromium'),
    source: 'package',
    env: { CHROMIUM_LIBRARY_PATH: path.join(target, 'al2023', 'lib'), CHROMIUM_FONTCONFIG_PATH: path.join(target, 'fonts') },
  };
  if (fs.existsSync(path.join(target, '.complete'))) return result;

  // Unpack beside the target and rename, so that concurrent runs never see half a browser.
  const staging = fs.mkdtempSync(`${target}.partial-`);
  try {
    fs.chmodSync(staging, 0o755);
    fs.writeFileSync(path.join(staging, 'chromium'), zlib.brotliDecompressSync(fs.readFileSync(path.join(bin, 'chromium.br'))), { mode: 0o755 });
    for (const archive of ['al2023', 'fonts']) {
      const dir = path.join(staging, archive);
      fs.mkdirSync(dir);
      const tar = spawnSync('tar', ['-x', '--no-same-owner', '-C', dir], {
        input: zlib.brotliDecompressSync(fs.readFileSync(path.join(bin, `${archive}.tar.br`))),
      });
      if (tar.status !== 0) throw new Error(`unpacking ${archive}.tar.br failed: ${tar.stderr?.toString() ?? tar.error?.message}`);
    }
    // The package's own fontconfig file names Lambda's directories; point it at ours.
    const fontsDir = path.join(target, 'fonts');
    fs.writeFileSync(
      path.join(staging, 'fonts', 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${fontsDir}</dir>\n  <cachedir>${path.join(target, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    fs.writeFileSync(path.join(staging, '.complete'), `${version}\n`);
    try {
      fs.renameSync(staging, target);
    } catch (error) {
      // Another run got there first.
      if (!fs.existsSync(path.join(target, '.complete'))) throw error;
      fs.rmSync(staging, { recursive: true, force: true });
    }
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  return result;
}
