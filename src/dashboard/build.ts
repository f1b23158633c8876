import fs from 'node:fs';
import path from 'node:path';

/** The repository root: the nearest folder above this file with the project's package.json. */
export function projectRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'web', 'dashboard'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root of the dashboard sources');
    dir = parent;
  }
}

/** The folder of the project's package.json (a container image holds the build, not web/). */
function packageRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the package root');
    dir = parent;
  }
  return dir;
}

export const dashboardSourceDir = (): string => path.join(projectRoot(), 'web', 'dashboard');
export const dashboardOutDir = (): string => path.join(packageRoot(), 'dist', 'dashboard');

/** The built files the service serves, by the name they are served under. */
export const DASHBOARD_ASSETS = ['app.js', 'app.css'] as const;

/**
 * Bundles the dashboard (Preact, Chart.js, qrcode, graphql-ws's client) into one script and
 * one stylesheet with esbuild. `npm run build` (and so `npm start`) calls it; the service
 * calls it too when the files are missing, so tests and a fresh checkout work without a step.
 */
export async function buildDashboard(outDir = dashboardOutDir()): Promise<void> {
  const esbuild = await import('esbuild');
  try {
    await esbuild.build({
      entryPoints: { app: path.join(dashboardSourceDir(), 'main.tsx') },
      bundle: true,
      minify: true,
      format: 'esm',
      target: 'es2020',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      outdir: outDir,
      legalComments: 'none',
      logLevel: 'warning',
      // A built bundle never depends on where it was built.
      define: { 'process.env.NODE_ENV': '"production"' },
    });
  } finally {
    // esbuild's helper process would keep a test runner (or the service) from exiting.
    await esbuild.stop();
  }
}

/** Whether every file the service serves is there. */
export function dashboardBuilt(outDir = dashboardOutDir()): boolean {
  return DASHBOARD_ASSETS.every((name) => fs.existsSync(path.join(outDir, name)));
}

if (require.main === module) {
  buildDashboard().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
