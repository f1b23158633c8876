#!/usr/bin/env node
// Builds `dist/` (`npm run build`) only when a source is newer than the last build.
//
//   node scripts/build-if-stale.js          build when stale, otherwise return at once
//   node scripts/build-if-stale.js --check  exit 1 (and say why) when stale, 0 when fresh
//
// A successful build leaves dist/.build-stamp, dated when that build started, so an edit made
// while it ran still counts as newer. Directories count with their own dates too: deleting or
// renaming a file changes its folder's date. A lock file (dist/.build-lock, holding the
// builder's pid) keeps two callers from building at once: the second waits for the first and
// then finds the build fresh. A lock left by a process that no longer runs is taken over.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');

/** What the build reads, relative to the project root: folders (walked) and single files. */
const INPUTS = [
  'src',
  'migrations',
  'bench',
  'web/dashboard',
  'packages/sdk/src',
  'packages/sdk/tsconfig.json',
  'packages/sdk/package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
];

/** Folders inside the inputs that are outputs or data, never sources. */
const SKIPPED = new Set(['node_modules', 'dist', 'results', '.data']);

const STAMP = path.join('dist', '.build-stamp');
const LOCK = path.join('dist', '.build-lock');

/** The newest modification among the inputs: `{ file, mtimeMs }` (file undefined if none exist). */
function newestInput(root = ROOT, inputs = INPUTS) {
  let newest = { file: undefined, mtimeMs: 0 };
  const visit = (full) => {
    let stat;
    try {
      stat = fs.statSync(full);
    } catch {
      return; // an optional input that is not there
    }
    if (stat.mtimeMs > newest.mtimeMs) newest = { file: path.relative(root, full), mtimeMs: stat.mtimeMs };
    if (!stat.isDirectory()) return;
    for (const entry of fs.readdirSync(full)) if (!SKIPPED.has(entry)) visit(path.join(full, entry));
  };
  for (const input of inputs) visit(path.join(root, input));
  return newest;
}

/** Whether `dist/` needs a build: `{ stale, reason }`. */
function staleness(root = ROOT, inputs = INPUTS) {
  let stampMs;
  try {
    stampMs = fs.statSync(path.join(root, STAMP)).mtimeMs;
  } catch {
    return { stale: true, reason: 'never built (no dist/.build-stamp)' };
  }
  const newest = newestInput(root, inputs);
  if (newest.mtimeMs > stampMs) return { stale: true, reason: `${newest.file} changed since the last build` };
  return { stale: false, reason: 'dist/ is newer than every source' };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Takes the lock file, waiting while a live process holds it; resolves to its release. */
async function acquireLock(root, { pollMs = 100, timeoutMs = 15 * 60_000 } = {}) {
  const lock = path.join(root, LOCK);
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lock, { force: true });
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    const holder = Number.parseInt(fs.readFileSync(lock, 'utf8').trim(), 10);
    // An empty file is a holder between creating and writing it: wait for it like any other.
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      fs.rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${LOCK} is still held by process ${holder}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Runs `npm run build` in `root`, its output passed through to this process's stderr. */
function npmBuild(root) {
  return new Promise((resolve, reject) => {
    const npmCli = process.env.npm_execpath;
    const [command, args] = npmCli && /\.c?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
    const child = spawn(command, [...args, 'run', '--silent', 'build'], { cwd: root, stdio: ['ignore', process.stderr, process.stderr] });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`npm run build failed (${signal ?? code})`))));
  });
}

/**
 * Builds when stale, under the lock. Resolves to `{ built, reason }`. `build(root)` does the
 * work (`npm run build` by default); `inputs` and `root` are for tests.
 */
async function buildIfStale({ root = ROOT, inputs = INPUTS, build = npmBuild, log = () => undefined } = {}) {
  if (!staleness(root, inputs).stale) return { built: false, reason: 'fresh' };
  const release = await acquireLock(root);
  try {
    // Whoever held the lock before may have built it meanwhile.
    const now = staleness(root, inputs);
    if (!now.stale) return { built: false, reason: 'built by another caller' };
    log(`[build] ${now.reason}: building dist/ …\n`);
    const startedAt = new Date();
    await build(root);
    const stamp = path.join(root, STAMP);
    fs.writeFileSync(stamp, `${startedAt.toISOString()}\n`);
    fs.utimesSync(stamp, startedAt, startedAt);
    return { built: true, reason: now.reason };
  } finally {
    release();
  }
}

module.exports = { INPUTS, STAMP, LOCK, newestInput, staleness, acquireLock, buildIfStale };

if (require.main === module) {
  if (process.argv.includes('--check')) {
    const { stale, reason } = staleness();
    process.stderr.write(`${stale ? 'stale' : 'fresh'}: ${reason}\n`);
    process.exit(stale ? 1 : 0);
  }
  buildIfStale({ log: (line) => process.stderr.write(line) }).then(
    () => process.exit(0),
    (e) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
