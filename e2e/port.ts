/** Port of the test server (E2E_PORT to run two suites side by side); Playwright starts it from the built dist/. */
export const E2E_PORT = Number(process.env.E2E_PORT ?? 4179);

/** Where the test server serves the built app and the harness page. */
export const E2E_ORIGIN = `http://127.0.0.1:${E2E_PORT}`;
