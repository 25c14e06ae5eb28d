import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium; playwright-core downloads no browser of its own. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Flags for a closed network: no background services phoning home (their connection attempts
 * otherwise storm and slow every page load). Playwright gives each launch a fresh temporary profile
 * (its own `--user-data-dir`), removed when the browser closes.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing; install Debian's chromium: apt-get install chromium`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 30_000 });
}

/** A page that records uncaught errors and console errors, for the test to assert there were none. */
export async function openPage(browser: Browser, options: { colorScheme?: 'light' | 'dark' } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: options.colorScheme ?? 'light' });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  return { context, page, errors };
}

/** `artifacts/<name>/`, created; `artifacts/` is git-ignored. */
export function artifactDir(name: string): string {
  const dir = join(process.cwd(), 'artifacts', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
