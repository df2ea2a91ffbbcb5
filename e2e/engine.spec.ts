import { expect, test } from '@playwright/test';

/**
 * How a run ends when something goes wrong mid-way: the finished points are kept, the status says
 * how it ended, and the error is the typed class that caused it.
 */
test.describe('failures are data', () => {
  test.beforeEach(async ({ page }) => {
    await page.goto('/e2e/harness/index.html');
  });

  test('a device lost mid-run keeps the finished point and fails with DeviceLostError', async ({ page }) => {
    const r = await page.evaluate(async () => (await window.harness).engine.lostDeviceMidRun());
    expect(r.status).toBe('failed');
    expect(r.error?.name).toBe('DeviceLostError');
    expect(r.points).toEqual([16]);
  });

  test('running out of GPU memory mid-run keeps the finished point and fails with GpuOutOfMemoryError', async ({
    page,
  }) => {
    const r = await page.evaluate(async () => (await window.harness).engine.outOfMemoryMidRun());
    expect(r.status).toBe('failed');
    expect(r.error?.name).toBe('GpuOutOfMemoryError');
    expect(r.error?.message).toContain('prefill of 32 tokens');
    expect(r.points).toEqual([16]);
  });

  test('a cancel before the start gives a cancelled result with nothing measured', async ({ page }) => {
    const r = await page.evaluate(async () => (await window.harness).engine.cancelBeforeStart());
    expect(r).toEqual({
      status: 'cancelled',
      error: { name: 'CancelledError', message: 'cancelled before the start' },
      points: [],
    });
  });
});
