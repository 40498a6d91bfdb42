// Session s1 (created 2026-11-26T09:00:00Z), exported by playwright-mcp-proxy.
// Run it with `npx playwright test`. Values masked when recorded (<secret>…</secret>) stay masked:
// put the real ones in, e.g. from process.env, before running it.
import { test, expect } from '@playwright/test';

// The session started from login profile github. Its storage state (cookies,
// localStorage, IndexedDB) is not included: export it with
//   proxy-server profile export github github.json
// (or GET /profiles/github/state with the operator's token) and put its path here.
test.use({ storageState: "<path to github.json>" });

test("session s1", async ({ page }) => {
  // r1: browser_navigate {"url":"http://127.0.0.1:8765/index.html"}
  await page.goto('http://127.0.0.1:8765/index.html');
  await expect(page).toHaveURL("http://127.0.0.1:8765/index.html");
  await expect(page).toHaveTitle("Probe Page");
});
