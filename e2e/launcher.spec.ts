import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect, test } from '@playwright/test';

/** Whether anything answers HTTP on the port. */
async function answers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/index.html`);
    return true;
  } catch {
    return false;
  }
}

test('killing the npx that started the static server stops the server, not only npx (the port is free again)', async () => {
  const port = 4193;
  // As a user would: `npx tsx bench/serve.ts &` then `kill $!`, where $! is npx itself.
  const npx = spawn('npx', ['tsx', 'bench/serve.ts', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: npx.stdout }).on('line', (l) => l.startsWith('Serving') && resolve());
    npx.once('exit', (code) => reject(new Error(`the server exited (${code}) before serving`)));
  });
  expect(await answers(port)).toBe(true);
  npx.kill('SIGTERM');
  // The server watches the npm process above it every 500 ms.
  await expect.poll(() => answers(port), { timeout: 10_000 }).toBe(false);
});

test('killing the npm that started serve-api stops the engine’s server too (issue 37, item 4: `npm run serve-api &` then `kill $!`)', async () => {
  test.setTimeout(90_000);
  const port = 8193;
  const models = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/v1/models`)).ok;
    } catch {
      return false;
    }
  };
  // npm itself is $!: it runs tsx, which runs the engine's own process (dist-node/api.mjs).
  const npm = spawn('npm', ['run', 'serve-api', '--', '--preset', 'ci-tiny', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: npm.stdout }).on('line', (l) => l.startsWith('Serving') && resolve());
    npm.once('exit', (code) => reject(new Error(`serve-api exited (${code}) before serving`)));
  });
  expect(await models()).toBe(true);
  npm.kill('SIGTERM');
  await expect.poll(models, { timeout: 15_000 }).toBe(false);
});
