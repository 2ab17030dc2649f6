import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = join(__dirname, '..', '..');
const CHROMIUM = process.env.PARLEY_CHROMIUM ?? '/usr/bin/chromium';
/** Debian's chromium, headless; see ../shared/STACK.md. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Builds the console with Vite into a fresh folder (a clean clone has no dist/). Vite is ESM-only,
 * so it runs as its own process rather than inside jest's CommonJS runtime.
 */
export async function buildConsole(): Promise<{ dir: string; remove: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-console-'));
  await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(ROOT, 'apps', 'console', 'vite.config.mts'), '--outDir', dir, '--emptyOutDir', '--logLevel', 'warn'],
    { cwd: ROOT, env: { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' } },
  );
  if (!existsSync(join(dir, 'index.html'))) {
    throw new Error(`the console build wrote no index.html into ${dir}`);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`chromium is not installed at ${CHROMIUM}: the console tests drive a real browser. Install it with \`apt-get install -y chromium\` (or set PARLEY_CHROMIUM).`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** A fresh browser context (its own sessionStorage) signed in through a `?token=` link. */
export async function openConsole(browser: Browser, baseUrl: string, token: string, path = '/'): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  await page.goto(`${baseUrl}${path}?token=${encodeURIComponent(token)}`);
  return { context, page };
}
