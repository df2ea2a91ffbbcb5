import { describe, expect, it } from 'vitest';
import { finiteError, formatError, maxError } from './error-figure.ts';

describe('validation error figures', () => {
  it('records a non-finite error as null, and a null makes the maximum null', () => {
    expect(finiteError(2.5e-6)).toBe(2.5e-6);
    expect(finiteError(Number.POSITIVE_INFINITY)).toBeNull();
    expect(finiteError(Number.NaN)).toBeNull();
    expect(maxError([1e-6, 3e-6, 2e-6])).toBe(3e-6);
    expect(maxError([1e-6, null, 2e-6])).toBeNull();
    expect(maxError([])).toBe(0);
    expect(formatError(null)).toContain('NaN or Inf');
    expect(formatError(1.5e-3)).toBe('1.50e-3');
  });
});
