// The UI half of the VS Code end-to-end test: Playwright drives headless Chromium on a running code-server
// with the packaged ctxls extension installed, and checks what a user sees. Each step saves a screenshot
// and what it read from the screen; tests/vscode/test_vscode_e2e.py asserts on the JSON this writes.
//
// Env: CS_URL, WS_DIR (the workspace code-server opened), OUT_DIR (screenshots), RESULT_JSON, CHROMIUM,
//      STEPS (comma-separated subset, default all), AGENT_PROMPT (for the agent step).
const { chromium } = require('playwright-core');
const fs = require('fs');
const path = require('path');

const CS_URL = process.env.CS_URL;
const WS_DIR = process.env.WS_DIR;
const OUT_DIR = process.env.OUT_DIR;
const RESULT_JSON = process.env.RESULT_JSON;
const CHROMIUM = process.env.CHROMIUM || '/usr/lib/chromium/chromium';
const ONLY = (process.env.STEPS || '').split(',').filter(Boolean);

const t0 = Date.now();
const result = { ok: false, steps: [], console_errors: [] };
const log = (m) => console.error(`[ui ${String(Date.now() - t0).padStart(6)}ms] ${m}`);

async function shot(page, name) {
  const file = path.join(OUT_DIR, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Quick Open a workspace file by its relative path and wait for its tab. */
async function openFile(page, rel) {
  const base = path.basename(rel);
  for (let i = 0; i < 6; i++) {
    // keys go where the focus is: put it in the editor area first (a hover or a tree can hold it)
    await page.mouse.move(5, 5);
    const editor = page.locator('.editor-instance .monaco-editor .view-lines').first();
    if (await editor.count()) {
      await editor.click({ position: { x: 400, y: 300 } }).catch(() => {});
    }
    // Ctrl+P now and then does not reach the workbench right after another widget closed; F1 opens the same
    // quick input (in command mode, which typing a path over the '>' turns into file mode)
    await page.keyboard.press(i % 2 ? 'F1' : 'Control+P');
    const input = page.locator('.quick-input-widget input');
    try {
      await input.waitFor({ state: 'visible', timeout: 4000 });
    } catch {
      await shot(page, `quickopen-retry-${i}`).catch(() => undefined);
      continue;
    }
    await input.fill(rel);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: base }).first();
    try {
      await row.waitFor({ timeout: 5000 });
      await page.keyboard.press('Enter');
      await page.locator('.tab.active', { hasText: base }).first().waitFor({ timeout: 10000 });
      await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor({ timeout: 10000 });
      return;
    } catch {
      await shot(page, `quickopen-retry-${i}`).catch(() => undefined);
      await page.keyboard.press('Escape');
      await page.waitForTimeout(1000); // Quick Open can be empty right after startup
    }
  }
  throw new Error(`could not open ${rel} with Quick Open`);
}

async function runCommand(page, title) {
  await page.keyboard.press('Control+Shift+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 10000 });
  await page.keyboard.press('Enter');
}

async function gotoLine(page, line) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout: 10000 });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await page.waitForTimeout(300);
}

/** One line of text per row of the Problems panel. */
async function problemRows(page) {
  return (await page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
}

async function editorText(page) {
  // the editor renders spaces as no-break spaces
  return (await page.locator('.editor-instance .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
}

/** The "Agent context (ctxls)" pane, made visible with room for its rows (the folder tree above it collapsed:
 * lists render their visible rows only). */
async function contextPane(page) {
  await page.keyboard.press('Control+Shift+E');
  const header = page.locator('.pane-header', { hasText: /Agent context \(ctxls\)/i }).first();
  await header.waitFor({ timeout: 20000 });
  const folders = page.locator('.pane-header[aria-label^="Explorer Section"]').first();
  if ((await folders.count()) && (await folders.getAttribute('aria-expanded')) === 'true') {
    await folders.click();
  }
  if ((await header.getAttribute('aria-expanded')) !== 'true') {
    await header.click();
  }
  return { header, pane: page.locator('.pane', { has: header }).first() };
}

/** A tree's rows as "label description" (innerText runs the two together). */
async function treeRows(pane) {
  return pane.locator('.monaco-list-row').evaluateAll((rows) => rows.map((r) => {
    const part = (sel) => (r.querySelector(sel)?.innerText ?? '').replace(/\s+/g, ' ').trim();
    const label = part('.label-name') || r.innerText.replace(/\s+/g, ' ').trim();
    const desc = part('.label-description');
    return desc ? `${label} ${desc}` : label;
  }));
}

/** Wait until the context view names ``agent`` and lists blocks, then read its header and rows. */
async function agentView(page, agent, out) {
  const { header, pane } = await contextPane(page);
  await page.waitForFunction((name) => {
    const h = [...document.querySelectorAll('.pane-header')].find((e) => /Agent context \(ctxls\)/i.test(e.innerText));
    const p = h && h.closest('.pane');
    return h && h.innerText.includes(name) && p && [...p.querySelectorAll('.monaco-list-row')]
      .some((r) => r.innerText.startsWith('Startup in'));
  }, agent, { timeout: 30000 });
  await page.waitForTimeout(700); // the tree renders its children a frame after the groups
  out.header = (await header.innerText()).replace(/\s+/g, ' ').trim();
  out.rows = await treeRows(pane);
  return pane;
}

/** Select each row naming a source file (the loaded blocks, not the "not loaded" ones) and read what opens:
 * the active tab, the selection in the status bar ("Ln 2, Col 56 (120 selected)"). Opening a file makes it the
 * active one, and the view then shows its directory: ``active`` is opened again before each row. */
async function openEachBlock(page, agent, active, out) {
  out.opened = [];
  const texts = out.rows;
  for (const text of texts) {
    const m = /^[^:]+: (\S+) ~?[\d,]+ tokens · /.exec(text);
    if (!m) {
      continue;
    }
    await openFile(page, active);
    const pane = await agentView(page, agent, {});
    const rows = pane.locator('.monaco-list-row');
    const all = await treeRows(pane);
    const i = all.indexOf(text);
    if (i < 0) {
      throw new Error(`row ${text} is gone: ${JSON.stringify(all)}`);
    }
    await rows.nth(i).click();
    const base = path.basename(m[1]);
    await page.locator('.tab.active', { hasText: base }).first().waitFor({ timeout: 10000 });
    await page.waitForFunction(() => {
      const el = document.querySelector('#status\\.editor\\.selection');
      return el && /selected/.test(el.innerText);
    }, null, { timeout: 10000 });
    await page.waitForTimeout(200);
    out.opened.push({ row: text, source: m[1],
                      tab: (await page.locator('.tab.active').first().innerText()).replace(/\s+/g, ''),
                      breadcrumbs: (await page.locator('.breadcrumbs-control').first().innerText()).replace(/\s+/g, ' '),
                      selection: (await page.locator('#status\\.editor\\.selection').first().innerText()).trim(),
                      screenshot: await shot(page, `27-opened-${agent.replace(/\W+/g, '')}-${out.opened.length + 1}`) });
  }
}

async function statusText(page) {
  const item = page.locator('.statusbar-item', { hasText: /ctx [\d.]+K? · [\d.]+%/ }).first();
  await item.waitFor({ timeout: 30000 });
  return (await item.innerText()).trim();
}

async function waitStatus(page, re) {
  await page.waitForFunction((src) => [...document.querySelectorAll('.statusbar-item')]
    .some((e) => new RegExp(src).test(e.textContent)), re.source, { timeout: 30000 });
  return statusText(page);
}

/** Pick ``agent`` in the picker, opened from the view's title button or the palette command. */
async function pickInPicker(page, agent, out, how) {
  if (how === 'title') {
    const { header } = await contextPane(page);
    await header.hover();
    const button = header.locator('.action-label[aria-label*="Show context for agent"]').first();
    await button.waitFor({ timeout: 10000 });
    await button.click();
  } else {
    await runCommand(page, 'ctxls: Show context for agent');
  }
  const widget = page.locator('.quick-input-widget');
  await widget.locator('.quick-input-list .monaco-list-row').first().waitFor({ timeout: 10000 });
  await page.waitForTimeout(300);
  out.picker_title = (await widget.locator('.quick-input-title').first().innerText().catch(() => '')).trim();
  out.picker_rows = (await widget.locator('.quick-input-list .monaco-list-row').allInnerTexts())
    .map((t) => t.replace(/\s+/g, ' ').trim());
  out.picker_active = (await widget.locator('.quick-input-list .monaco-list-row.focused').allInnerTexts())
    .map((t) => t.replace(/\s+/g, ' ').trim());
  out.screenshot_picker = await shot(page, `20-agent-picker-${agent}`);
  await widget.locator('input').first().fill(agent);
  await page.waitForTimeout(300);
  await page.keyboard.press('Enter');
  await widget.waitFor({ state: 'hidden', timeout: 10000 });
}

const STEPS = {
  // The Problems panel lists the duplicate-instruction finding of services/billing/CLAUDE.md.
  async problems(page, out) {
    await openFile(page, 'services/billing/CLAUDE.md');
    await page.locator('.monaco-editor .squiggly-warning').first().waitFor({ state: 'attached', timeout: 60000 });
    await page.keyboard.press('Control+Shift+M');
    const row = page.locator('.markers-panel .monaco-list-row', { hasText: 'CTX201' }).first();
    await row.waitFor({ timeout: 30000 });
    out.problems = await problemRows(page);
    out.screenshot = await shot(page, '01-problems');
  },

  // The status bar shows what a session started in the active file's directory loads.
  async statusbar(page, out) {
    const item = page.locator('.statusbar-item', { hasText: /ctx [\d.]+K? · [\d.]+%/ }).first();
    await item.waitFor({ timeout: 30000 });
    // the figure for services/billing, not the one of the workspace root it showed before the file opened
    await page.waitForFunction(() => {
      const el = [...document.querySelectorAll('.statusbar-item')].find((e) => /ctx [\d.]+K? ·/.test(e.textContent));
      return el && el.getAttribute('aria-label') !== null;
    }, null, { timeout: 10000 });
    await page.waitForTimeout(500);
    out.text = (await item.innerText()).trim();
    out.warning = await item.evaluate((e) => e.classList.contains('warning-kind') ||
      getComputedStyle(e).backgroundColor !== 'rgba(0, 0, 0, 0)');
    await item.hover();
    const tip = page.locator('.monaco-hover:visible, .workbench-hover:visible', { hasText: 'before the first prompt' }).first();
    await tip.waitFor({ timeout: 10000 });
    out.tooltip = (await tip.innerText()).trim();
    out.screenshot = await shot(page, '02-statusbar');
    await page.mouse.move(700, 300);
  },

  // The "Agent context (ctxls)" view in the explorer lists the blocks.
  async contextview(page, out) {
    const { pane } = await contextPane(page);
    const rows = pane.locator('.monaco-list-row');
    await rows.filter({ hasText: 'services/billing/CLAUDE.md' }).first().waitFor({ timeout: 20000 });
    out.rows = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
    out.screenshot = await shot(page, '03-context-view');
    // selecting a block opens its source
    await rows.filter({ hasText: 'CLAUDE.md: CLAUDE.md' }).first().click();
    await page.locator('.tab.active', { hasText: 'CLAUDE.md' }).first().waitFor({ timeout: 10000 });
    await page.waitForFunction(() => {
      const el = document.querySelector('.editor-instance .monaco-editor .view-lines');
      return el && el.innerText.includes('monorepo');
    }, null, { timeout: 10000 });
    out.opened_text = await editorText(page);
    out.opened_breadcrumbs = (await page.locator('.breadcrumbs-control').first().innerText()).replace(/\s+/g, ' ');
    out.opened_selection = (await page.locator('#status\\.editor\\.selection').first().innerText()).trim();
    out.screenshot_opened = await shot(page, '03b-context-view-opened');
  },

  // Hovering a source file shows the context table.
  async hover(page, out) {
    await openFile(page, 'services/billing/src/refunds.py');
    const word = page.locator('.editor-instance .monaco-editor .view-line').first();
    await word.waitFor({ timeout: 10000 });
    const box = await word.boundingBox();
    const hover = page.locator('.monaco-hover:visible', { hasText: 'loads' }).first();
    let ok = false;
    for (let i = 0; i < 5 && !ok; i++) {
      await page.mouse.move(box.x + 12 + 3 * i, box.y + box.height / 2);
      try {
        await hover.waitFor({ timeout: 5000 });
        ok = true;
      } catch {
        await page.mouse.move(5, 5);
      }
    }
    if (!ok) {
      throw new Error('no ctxls hover on refunds.py');
    }
    out.text = (await hover.innerText()).trim();
    out.screenshot = await shot(page, '04-hover');
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
  },

  // The quick fix deletes the duplicate line, and the finding goes away.
  async quickfix(page, out) {
    await openFile(page, 'services/billing/CLAUDE.md');
    out.before = await editorText(page);
    await gotoLine(page, 4);
    await page.keyboard.press('Control+.');
    const item = page.locator('.action-widget .monaco-list-row', { hasText: 'Delete this duplicate' }).first();
    await item.waitFor({ timeout: 15000 });
    out.menu = (await page.locator('.action-widget:visible').first().innerText()).split('\n').filter(Boolean);
    out.screenshot_menu = await shot(page, '05-quickfix-menu');
    await item.click();
    await page.waitForFunction(() => {
      const el = document.querySelector('.editor-instance .monaco-editor .view-lines');
      return el && !el.innerText.includes('type hints');
    }, null, { timeout: 15000 });
    await page.keyboard.press('Control+S');
    await page.waitForTimeout(500);
    out.after = await editorText(page);
    await page.keyboard.press('Control+Shift+M');
    await page.waitForFunction(() => {
      const p = document.querySelector('.markers-panel');
      return p && !p.innerText.includes('CTX201');
    }, null, { timeout: 30000 });
    out.problems_after = await problemRows(page);
    out.screenshot = await shot(page, '06-quickfix-applied');
  },

  // The five-agent workspace (AGENT_SETTING is the ctxls.context.agent setting the run started with): the
  // view shows that agent for the active file svc/app.py, before anything is picked.
  async agentsetting(page, out) {
    await openFile(page, 'svc/app.py');
    await agentView(page, process.env.AGENT_SETTING_NAME, out);
    out.status = await statusText(page);
    out.screenshot = await shot(page, '21-agent-setting');
    await openEachBlock(page, process.env.AGENT_SETTING_NAME, 'svc/app.py', out);
  },

  // The view title button: pick Codex. The view, its description and the status bar follow; each block opens
  // at its loaded lines (AGENTS.md up to where the byte budget cuts it).
  async agentpick(page, out) {
    await openFile(page, 'svc/app.py');
    await pickInPicker(page, 'Codex', out, 'title');
    await agentView(page, 'Codex', out);
    out.status = await waitStatus(page, /· Codex$/);
    out.screenshot = await shot(page, '22-agent-codex');
    await openEachBlock(page, 'Codex', 'svc/app.py', out);
    out.screenshot_opened = await shot(page, '23-agent-codex-opened');
  },

  // The choice survives a window reload.
  async agentreload(page, out) {
    await page.reload();
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } }).catch(() => {});
    await openFile(page, 'svc/app.py');
    await agentView(page, 'Codex', out);
    out.status = await waitStatus(page, /· Codex$/);
    out.screenshot = await shot(page, '24-agent-after-reload');
  },

  // ... and a restart of the server.
  async agentrestart(page, out) {
    await runCommand(page, 'ctxls: Restart server');
    await page.waitForTimeout(1500);
    await openFile(page, 'svc/app.py');
    await agentView(page, 'Codex', out);
    out.status = await waitStatus(page, /· Codex$/);
    out.screenshot = await shot(page, '25-agent-after-restart');
  },

  // The palette command: pick Cursor.
  async agentpalette(page, out) {
    await openFile(page, 'svc/app.py');
    await pickInPicker(page, 'Cursor', out, 'palette');
    await agentView(page, 'Cursor', out);
    out.status = await waitStatus(page, /· Cursor$/);
    out.screenshot = await shot(page, '26-agent-cursor');
    await openEachBlock(page, 'Cursor', 'svc/app.py', out);
  },

  // No server anywhere: one notification with the install command and a button that opens the setting.
  async missing(page, out) {
    const toast = page.locator('.notification-toast', { hasText: 'language server was not found' }).first();
    await toast.waitFor({ timeout: 60000 });
    out.text = (await toast.innerText()).replace(/\s+/g, ' ').trim();
    out.toasts = await page.locator('.notification-toast', { hasText: 'ctxls' }).count();
    out.status = (await page.locator('.statusbar-item', { hasText: 'ctx: no server' }).first().innerText()).trim();
    out.screenshot = await shot(page, '07-server-missing');
    await toast.locator('.monaco-button', { hasText: 'Open setting' }).first().click();
    const editor = page.locator('.settings-editor').first();
    await editor.waitFor({ timeout: 20000 });
    await page.locator('.settings-editor .setting-item-contents', { hasText: 'Server: Path' }).first()
      .waitFor({ timeout: 20000 });
    out.settings_search = await page.locator('.settings-editor .suggest-input-container textarea, .settings-editor input')
      .first().inputValue().catch(() => null);
    out.settings_text = (await editor.innerText()).replace(/\s+/g, ' ').slice(0, 600);
    out.screenshot_setting = await shot(page, '08-server-missing-setting');
  },

  // "ctxls: Ask agent" against the Messages API stand-in: the prompt goes in an input box, the agent's edit
  // arrives as a workspace edit that needs confirmation, VS Code's refactor preview shows it, Apply applies it.
  async agent(page, out) {
    await openFile(page, 'services/billing/CLAUDE.md');
    out.before = await editorText(page);
    await runCommand(page, 'ctxls: Ask agent');
    const box = page.locator('.quick-input-widget input');
    await box.waitFor({ state: 'visible', timeout: 10000 });
    await page.locator('.quick-input-widget', { hasText: 'What should the agent do?' }).first()
      .waitFor({ timeout: 10000 });
    await box.fill(process.env.AGENT_PROMPT);
    out.screenshot_prompt = await shot(page, '09-agent-prompt');
    await page.keyboard.press('Enter');
    // the refactor preview (the "bulk edit" pane) with the agent's change, before anything is applied
    const preview = page.locator('.bulk-edit-panel, .pane-body.bulk-edit-panel, [id="refactorPreview"]').first();
    await preview.waitFor({ timeout: 60000 });
    const row = page.locator('.bulk-edit-panel .monaco-list-row', { hasText: 'CLAUDE.md' }).first();
    await row.waitFor({ timeout: 20000 });
    out.preview_rows = (await page.locator('.bulk-edit-panel .monaco-list-row').allInnerTexts())
      .map((t) => t.replace(/\s+/g, ' ').trim());
    out.during = await editorText(page); // nothing applied yet
    out.screenshot_preview = await shot(page, '10-agent-refactor-preview');
    out.preview_html = (await row.innerHTML()).slice(0, 3000);
    // edits that need confirmation start unticked: tick the file (all its edits), then Apply
    const boxes = page.locator('.bulk-edit-panel .monaco-list-row [role=checkbox], .bulk-edit-panel .monaco-list-row input[type=checkbox], .bulk-edit-panel .monaco-list-row .monaco-custom-toggle');
    out.preview_checked_before = await boxes.evaluateAll((els) => els.map((e) =>
      e.getAttribute('aria-checked') === 'true' || e.checked === true || e.classList.contains('checked')));
    await boxes.first().click();
    await page.waitForTimeout(300);
    out.preview_checked_after = await boxes.evaluateAll((els) => els.map((e) =>
      e.getAttribute('aria-checked') === 'true' || e.checked === true || e.classList.contains('checked')));
    out.screenshot_ticked = await shot(page, '10b-agent-preview-ticked');
    await page.locator('.monaco-button', { hasText: /^Apply$/ }).first().click();
    // the run's report (the final answer and the token ledger) opens as a markdown document
    const report = page.locator('.tab', { hasText: /^agent-.*\.md/ }).first();
    await report.waitFor({ timeout: 30000 });
    await page.waitForFunction(() => {
      const el = document.querySelector('.editor-instance .monaco-editor .view-lines');
      return el && el.innerText.replace(/\u00a0/g, ' ').includes('Token ledger');
    }, null, { timeout: 20000 });
    out.report_tab = (await report.innerText()).trim();
    out.report_text = await editorText(page);
    out.screenshot_report = await shot(page, '11-agent-report');
    await page.locator('.tab', { hasText: 'CLAUDE.md' }).first().click();
    await page.waitForFunction((want) => [...document.querySelectorAll('.editor-instance .monaco-editor .view-lines')]
      .some((el) => el.innerText.replace(/\u00a0/g, ' ').includes(want)), process.env.AGENT_EXPECT, { timeout: 20000 });
    out.after = await editorText(page);
    await page.keyboard.press('Control+S');
    await page.waitForTimeout(500);
    out.screenshot = await shot(page, '12-agent-applied');
    // the session stays open across asks: its token ledger
    await runCommand(page, 'ctxls: Show agent session ledger');
    const ledger = page.locator('.tab', { hasText: /^ledger-.*\.md/ }).first();
    await ledger.waitFor({ timeout: 30000 });
    await page.waitForTimeout(500);
    out.ledger_text = await editorText(page);
    out.screenshot_ledger = await shot(page, '13-agent-ledger');
    // "ctxls: Fix this diagnostic with the agent" on the duplicate: the prompt comes prefilled with the finding
    await page.locator('.tab', { hasText: 'CLAUDE.md' }).first().click();
    await page.waitForTimeout(300);
    await gotoLine(page, 4);
    await runCommand(page, 'ctxls: Fix this diagnostic with the agent');
    const fix = page.locator('.quick-input-widget input');
    await fix.waitFor({ state: 'visible', timeout: 10000 });
    await page.waitForFunction(() => {
      const el = document.querySelector('.quick-input-widget input');
      return el && el.value.startsWith('Fix this diagnostic');
    }, null, { timeout: 10000 });
    out.fix_prompt = await fix.inputValue();
    await page.waitForTimeout(400); // let the quick input finish fading in
    out.screenshot_fix = await shot(page, '14-agent-fix-prompt');
    await page.keyboard.press('Enter');
    const reports = page.locator('.tab', { hasText: /^agent-.*\.md/ });
    await page.waitForFunction(() => [...document.querySelectorAll('.editor-instance .monaco-editor .view-lines')]
      .some((el) => el.innerText.replace(/\u00a0/g, ' ').includes('Nothing to change')), null, { timeout: 30000 });
    out.fix_report_tabs = await reports.count();
  },
};
const DEFAULT_STEPS = ['problems', 'statusbar', 'contextview', 'hover', 'quickfix'];

(async () => {
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('console', (m) => { if (m.type() === 'error') result.console_errors.push(m.text().slice(0, 300)); });
  try {
    await page.goto(`${CS_URL}/?folder=${encodeURIComponent(WS_DIR)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } }).catch(() => {});
    log('workbench loaded');
    for (const name of ONLY.length ? ONLY : DEFAULT_STEPS) {
      const fn = STEPS[name];
      const out = { name, ok: false };
      result.steps.push(out);
      const t = Date.now();
      try {
        await fn(page, out);
        out.ok = true;
      } catch (e) {
        out.error = String((e && e.stack) || e);
        out.screenshot = await shot(page, `fail-${name}`).catch(() => undefined);
      }
      out.ms = Date.now() - t;
      log(`${name}: ${out.ok ? 'ok' : 'FAILED ' + out.error.split('\n')[0]}`);
      if (!out.ok) {
        break;
      }
    }
    result.ok = result.steps.length > 0 && result.steps.every((s) => s.ok);
  } catch (e) {
    result.error = String((e && e.stack) || e);
    await shot(page, 'fail-startup').catch(() => undefined);
  } finally {
    result.elapsed_ms = Date.now() - t0;
    result.console_errors = result.console_errors.slice(0, 30);
    fs.writeFileSync(RESULT_JSON, JSON.stringify(result, null, 2));
    await browser.close();
  }
  process.exit(result.ok ? 0 : 1);
})();
