import { expect, test } from '@playwright/test';

test('engine errors cross the worker boundary typed, with a clear message', async ({ page }) => {
  await page.goto('/index.html');
  await expect(page.getByTestId('device')).toContainText('Adapter:');
  const errors = await page.evaluate(async () => {
    const attempt = async (f: () => Promise<unknown>) => {
      try {
        await f();
        return { name: 'none', message: '' };
      } catch (e) {
        return { name: (e as Error).name, message: (e as Error).message, isError: e instanceof Error };
      }
    };
    return {
      preset: await attempt(() =>
        window.engine.verify({ model: { kind: 'preset', preset: 'gpt-9', seed: 0 }, tokens: [1] }),
      ),
      token: await attempt(() =>
        window.engine.verify({ model: { kind: 'preset', preset: 'ci-tiny', seed: 0 }, tokens: [1, 5000] }),
      ),
      missing: await attempt(() =>
        window.engine.verify({ model: { kind: 'url', baseUrl: '/no-such-model/' }, tokens: [1] }),
      ),
    };
  });
  expect(errors.preset).toMatchObject({ name: 'ConfigError', isError: true });
  expect(errors.preset.message).toContain('Unknown preset "gpt-9"');
  expect(errors.token).toMatchObject({ name: 'InputError' });
  expect(errors.token.message).toContain('Token 5000 at index 1 is not an id in 0…508');
  expect(errors.missing.message).toContain('HTTP 404');
});

test('the worker keeps a cancel that arrives before its run, and stops a run mid-way keeping its points', async ({
  page,
}) => {
  test.setTimeout(120_000);
  await page.goto('/index.html');
  await expect(page.getByTestId('device')).toContainText('Adapter:');
  const spec = {
    model: { kind: 'preset', preset: 'ci-tiny', seed: 0 },
    suite: 'custom',
    kv: { mode: 'paged', pageSize: 16 },
    autotune: false,
    workloads: [{ kind: 'prefill', lengths: [16, 32, 64, 128], reps: 3, warmup: 1, profile: false }],
  };
  const early = await page.evaluate(async (s) => {
    await window.engine.cancel('early');
    const r = await window.benchRun(s, 'early');
    return { status: r.status, error: r.error, points: r.points.length };
  }, spec);
  expect(early).toMatchObject({ status: 'cancelled', error: { name: 'CancelledError' }, points: 0 });

  const mid = await page.evaluate(async (s) => {
    window.benchProgress = (p) => {
      if (p.point) void window.engine.cancel('mid');
    };
    const r = await window.benchRun(s, 'mid');
    return { status: r.status, error: r.error, points: r.points.map((p) => p.tokens) };
  }, spec);
  expect(mid.status).toBe('cancelled');
  expect(mid.error?.name).toBe('CancelledError');
  // The cancel lands within a repetition or two of the first point: that point is kept, not all four.
  expect(mid.points[0]).toBe(16);
  expect(mid.points.length).toBeLessThan(4);
});
