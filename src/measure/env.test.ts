import { describe, expect, it } from 'vitest';
import { browserName } from './env.ts';

describe('browserName', () => {
  it('names the browser and its version', () => {
    expect(
      browserName(
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.114 Safari/537.36',
      ),
    ).toBe('HeadlessChrome 156.0.8078.114');
    expect(
      browserName('Mozilla/5.0 (Windows NT 10.0) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86'),
    ).toBe('Edge 131.0.2903.86');
    expect(browserName('Mozilla/5.0 (Macintosh) Version/18.2 Safari/605.1.15')).toBe('Safari 18.2');
    expect(browserName('curl/8')).toBe('unknown browser');
  });
});
