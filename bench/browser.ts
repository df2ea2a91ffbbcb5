import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Browser, LaunchOptions } from '@playwright/test';

/**
 * Flags that give headless Chromium a WebGPU adapter (SwiftShader when there is no GPU), GPU
 * timestamps that are not quantized (WebGPU developer features; without them Chrome may round
 * timestamps to 100 µs, and the run then records the quantum and places points by the wall clock),
 * and that stop its background calls home, which fail noisily on machines without a network.
 */
export function webgpuArgs(): string[] {
  const args = [
    '--enable-unsafe-webgpu',
    '--enable-webgpu-developer-features',
    '--enable-unsafe-swiftshader',
    '--enable-features=Vulkan',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-dev-shm-usage',
  ];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return args;
}

/** Playwright's own browser downloads, newest first (~/.cache/ms-playwright/chromium-*). */
function playwrightBrowsers(): string[] {
  const root = process.env.PLAYWRIGHT_BROWSERS_PATH || join(homedir(), '.cache', 'ms-playwright');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => /^chromium-\d+$/.test(d))
    .sort((a, b) => Number(b.split('-')[1]) - Number(a.split('-')[1]))
    .flatMap((d) => [
      join(root, d, 'chrome-linux', 'chrome'),
      join(root, d, 'chrome-linux64', 'chrome'),
      join(root, d, 'chrome-mac', 'Chromium.app', 'Contents', 'MacOS', 'Chromium'),
      join(root, d, 'chrome-win', 'chrome.exe'),
    ]);
}

const SYSTEM_PATHS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/snap/bin/chromium',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
];

/** Where a browser was found, so reports can say which one ran. */
export interface BrowserChoice {
  executablePath?: string;
  channel?: 'chrome';
  source: string;
}

/**
 * Finds Chromium or Chrome: an explicit path, then env CHROMIUM_PATH, then Playwright's downloads,
 * then the usual system paths. Without any of those it falls back to Playwright's `chrome` channel
 * (an installed Google Chrome); launch then fails with a message that says what to set.
 */
export function findBrowser(explicit?: string): BrowserChoice {
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`--browser ${explicit}: no such file`);
    return { executablePath: explicit, source: '--browser' };
  }
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH=${fromEnv}: no such file`);
    return { executablePath: fromEnv, source: 'CHROMIUM_PATH' };
  }
  for (const path of [...playwrightBrowsers(), ...SYSTEM_PATHS]) {
    if (existsSync(path)) return { executablePath: path, source: path };
  }
  return { channel: 'chrome', source: 'Playwright channel "chrome"' };
}

export function launchOptions(choice: BrowserChoice, headed = false): LaunchOptions {
  return {
    headless: !headed,
    args: webgpuArgs(),
    // The CLI handles Ctrl-C itself (cancel, then write what finished); Playwright must not close
    // the browser under it.
    handleSIGINT: false,
    ...(choice.executablePath ? { executablePath: choice.executablePath } : { channel: choice.channel }),
  };
}

export async function launchBrowser(explicit?: string, headed = false): Promise<Browser> {
  const choice = findBrowser(explicit);
  try {
    // Loaded here, not at the top: the native runtime's CLIs (and the air-gapped kit, which carries
    // no Playwright) import this file for findBrowser alone.
    const { chromium } = await import('@playwright/test');
    return await chromium.launch(launchOptions(choice, headed));
  } catch (e) {
    throw new Error(
      `Could not start a browser (${choice.source}): ${(e as Error).message.split('\n')[0]}\n` +
        'Install Chromium (Debian: apt-get install chromium) or Chrome, or point CHROMIUM_PATH / --browser at one.',
    );
  }
}
