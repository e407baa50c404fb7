// The extension-test route: code-server runs with `--vscode-option enable-smoke-test-driver`, so the
// workbench honours the `payload` query: extensionDevelopmentPath (client-vscode/, built) and
// extensionTestsPath (api_suite/index.js, whose run() executes inside the real extension host). The workbench
// calls window.codeAutomationExit(code) when run() settles; the suite writes its own JSON result.
// Env: CS_URL, WS_DIR, EXT_DEV, EXT_TESTS, CHROMIUM, RESULT_JSON (this driver's), TIMEOUT_MS.
const { chromium } = require('playwright-core');
const fs = require('fs');

const CS_URL = process.env.CS_URL;
const TIMEOUT = Number(process.env.TIMEOUT_MS || 180000);

(async () => {
  const t0 = Date.now();
  const authority = new URL(CS_URL).host; // code-server's remote authority is the host:port the browser used
  const remote = (p) => `vscode-remote://${authority}${p}`;
  const payload = [['extensionDevelopmentPath', remote(process.env.EXT_DEV)],
                   ['extensionTestsPath', remote(process.env.EXT_TESTS)]];
  const url = `${CS_URL}/?folder=${encodeURIComponent(process.env.WS_DIR)}` +
              `&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true,
                                          args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const logs = [];
  let done;
  const exited = new Promise((r) => (done = r));
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    logs.push(`${type} ${String((args || []).join(' ')).slice(0, 500)}`);
  });
  await page.exposeFunction('codeAutomationExit', (code) => done(code));
  await page.goto(url);
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), TIMEOUT))]);
  if (process.env.SHOT) {
    await page.screenshot({ path: process.env.SHOT }).catch(() => undefined);
  }
  fs.writeFileSync(process.env.RESULT_JSON, JSON.stringify({ ok: code === 0, exit_code: code,
                                                             elapsed_ms: Date.now() - t0, logs: logs.slice(-200) }, null, 2));
  await browser.close();
  process.exit(code === 0 ? 0 : 1);
})();
