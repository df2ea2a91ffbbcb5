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
