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
