import { describe, expect, it } from 'vitest';
import { browserFromHints, browserName } from './env.ts';

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

  it('prefers the full version from client hints, skipping placeholder and generic brands', () => {
    const hints = [
      { brand: 'Chromium', version: '156.0.8078.114' },
      { brand: 'Not)A;Brand', version: '24.0.0.0' },
      { brand: 'Google Chrome', version: '156.0.8078.114' },
    ];
    expect(browserFromHints(hints, 'Mozilla/5.0 Chrome/156.0.0.0')).toBe('Google Chrome 156.0.8078.114');
    expect(browserFromHints([hints[0], hints[1]], 'Mozilla/5.0 HeadlessChrome/156.0.0.0')).toBe(
      'Chromium 156.0.8078.114 (headless)',
    );
    expect(browserFromHints([], 'Mozilla/5.0 Firefox/140.0')).toBe('Firefox 140.0');
  });
});
