/** "Chrome 156.0.8078.114" (or Edge, HeadlessChrome, Firefox, Safari) from a user-agent string. */
export function browserName(userAgent: string): string {
  for (const [pattern, name] of [
    [/Edg\/([\d.]+)/, 'Edge'],
    [/HeadlessChrome\/([\d.]+)/, 'HeadlessChrome'],
    [/Chrome\/([\d.]+)/, 'Chrome'],
    [/Firefox\/([\d.]+)/, 'Firefox'],
    [/Version\/([\d.]+).*Safari/, 'Safari'],
  ] as const) {
    const m = userAgent.match(pattern);
    if (m) return `${name} ${m[1]}`;
  }
  return 'unknown browser';
}

/** A brand and full version from User-Agent Client Hints (`navigator.userAgentData`). */
export interface BrandVersion {
  brand: string;
  version: string;
}

/**
 * The browser with its full version. Chrome's user-agent string is reduced to "156.0.0.0", so the
 * full version comes from User-Agent Client Hints where the browser offers them (Chromium, also
 * in workers); the user-agent string is the fallback. Placeholder brands ("Not A;Brand") and the
 * generic "Chromium" lose to a specific one (Google Chrome, Microsoft Edge).
 */
export function browserFromHints(fullVersionList: readonly BrandVersion[], userAgent: string): string {
  const real = fullVersionList.filter((b) => !/not.?a.?brand/i.test(b.brand));
  const specific = real.find((b) => b.brand !== 'Chromium') ?? real[0];
  if (!specific) return browserName(userAgent);
  const headless = /HeadlessChrome/.test(userAgent) ? ' (headless)' : '';
  return `${specific.brand} ${specific.version}${headless}`;
}
