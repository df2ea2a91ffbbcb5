import { describe, expect, it } from 'vitest';
import { formatBytes, formatExact } from './format.ts';

describe('byte formats', () => {
  it('are exact, then decimal or binary with the unit named', () => {
    expect(formatExact(137_953_296_384)).toBe('137,953,296,384');
    expect(formatBytes(137_953_296_384, 'decimal')).toBe('137.95 GB');
    expect(formatBytes(137_953_296_384, 'binary')).toBe('128.48 GiB');
    expect(formatBytes(327_680, 'binary')).toBe('320.00 KiB');
    expect(formatBytes(512, 'decimal')).toBe('512 B');
    expect(formatBytes(-2e9, 'decimal')).toBe('−2.00 GB');
  });
});
