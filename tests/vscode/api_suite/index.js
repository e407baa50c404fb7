// API-level checks of the ctxls extension, run inside the real extension host of code-server
// (extensionTestsPath). run() must settle: resolve = pass, reject = fail. It writes what it saw to
// $API_RESULT_JSON (the extension host inherits code-server's environment), which
// tests/vscode/test_vscode_e2e.py compares with the CLI.
const vscode = require('vscode');
const fs = require('fs');
const path = require('path');

const WS = process.env.WS_DIR;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeout = 30000) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) {
      return last;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function open(rel) {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(WS, rel)));
  await vscode.window.showTextDocument(doc);
  return doc;
}

function hoverText(hovers) {
  return hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value)));
}

exports.run = async function run() {
  const res = { ok: false, checks: [] };
  const check = (name, value) => {
    res.checks.push(name);
    return value;
  };
  const t0 = Date.now();
  try {
    const ext = vscode.extensions.getExtension('ctxls.ctxls');
    if (!ext) {
      throw new Error('extension ctxls.ctxls is not loaded');
    }
    const api = await ext.activate();
    res.server_origin = check('server origin', api.serverOrigin());
    res.client_running = api.client()?.isRunning() ?? false;

    const all = await vscode.commands.getCommands(true);
    const contributed = ext.packageJSON.contributes.commands.map((c) => c.command);
    res.missing_commands = check('commands', contributed.filter((c) => !all.includes(c)));
    res.server_commands = ['ctxls.contextReport', 'ctxls.budgetReport', 'ctxls.refresh', 'ctxls.applyFix']
      .filter((c) => all.includes(c));

    // diagnostics of a duplicated instruction
    const billing = await open('services/billing/CLAUDE.md');
    const diags = await until('CTX201 on services/billing/CLAUDE.md', () => {
      const ds = vscode.languages.getDiagnostics(billing.uri).filter((d) => d.source === 'ctxls');
      return ds.some((d) => String(d.code?.value ?? d.code) === 'CTX201') && ds;
    });
    res.diagnostics = check('diagnostics', diags.map((d) => ({
      code: String(d.code?.value ?? d.code), line: d.range.start.line, message: d.message, severity: d.severity })));

    // hover on the instruction file comes once (the language client's; the source-file provider stays out)
    const mdHovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', billing.uri,
                                                          new vscode.Position(1, 3));
    res.md_hovers = check('hover on markdown', hoverText(mdHovers).filter((t) => t.includes('**ctxls**')).length);
    const lenses = await vscode.commands.executeCommand('vscode.executeCodeLensProvider', billing.uri);
    res.md_lenses = check('code lens', lenses.map((l) => l.command?.title));

    // the context of a source file: model, status bar, view
    const src = await open('services/billing/src/refunds.py');
    const srcHovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', src.uri,
                                                           new vscode.Position(0, 5));
    res.source_hover = check('hover on source', hoverText(srcHovers).join('\n'));
    const ctx = await until('the context of refunds.py', () =>
      api.context.current?.context.touched[0] === 'services/billing/src/refunds.py' && api.context.current);
    res.context = check('context', ctx);
    res.status_text = api.statusBar.item.text;
    res.status_warning = api.statusBar.item.backgroundColor?.id ?? null;
    const groups = api.view.getChildren();
    res.view = check('view', groups.map((g) => ({
      label: api.view.getTreeItem(g).label,
      description: api.view.getTreeItem(g).description,
      children: api.view.getChildren(g).map((b) => {
        const item = api.view.getTreeItem(b);
        return { label: item.label, description: item.description, command: item.command?.command ?? null,
                 target: item.command?.arguments?.[0]?.fsPath ?? null };
      }),
    })));

    // the agent: the setting's default (claude-code) until one is picked; a pick (kept in workspaceState) asks
    // the server for that agent; an unknown one is refused; changing the setting replaces the pick
    res.agent_default = check('agent default', {
      agent: api.context.agent, origin: api.context.agentOrigin, answered: ctx.agent,
      targeted: ctx.agents?.targeted ?? null, targeted_by: ctx.agents?.targeted_by ?? null,
      all: (ctx.agents?.all ?? []).map((a) => a.id), view_description: api.view.view.description });
    const cfg = vscode.workspace.getConfiguration('ctxls');
    res.agent_pick_result = await vscode.commands.executeCommand('ctxls.pickAgent', 'codex');
    const codex = await until('the Codex context', () =>
      api.context.current?.agent === 'codex' && api.context.current?.context.touched.length && api.context.current);
    res.agent_codex = check('agent picked', {
      context: codex.context, origin: api.context.agentOrigin, view_description: api.view.view.description,
      status_text: api.statusBar.item.text,
      groups: api.view.getChildren().map((g) => ({
        label: api.view.getTreeItem(g).label,
        children: api.view.getChildren(g).map((b) => api.view.getTreeItem(b).label) })) });
    res.agent_unknown = await vscode.commands.executeCommand('ctxls.pickAgent', 'windsurf')
      .then(() => 'accepted', (e) => String(e.message || e));
    res.agent_after_unknown = api.context.agent;
    await cfg.update('context.agent', 'copilot', vscode.ConfigurationTarget.Workspace);
    const copilot = await until('the setting to replace the pick', () =>
      api.context.current?.agent === 'copilot' && api.context.current);
    res.agent_setting = check('agent setting', { agent: api.context.agent, origin: api.context.agentOrigin,
                                                 answered: copilot.agent, view_description: api.view.view.description });
    await cfg.update('context.agent', undefined, vscode.ConfigurationTarget.Workspace);
    await until('back to Claude Code', () => api.context.current?.agent === 'claude-code' &&
      api.context.current.context.touched.length && api.context.current);
    res.agent_reset = check('agent reset', { agent: api.context.agent, status_text: api.statusBar.item.text });

    // settings reach the server (only what is set): a tiny session budget turns the status bar to warning,
    // another window changes the percentage
    await cfg.update('check.session_budget_tokens', 100, vscode.ConfigurationTarget.Workspace);
    await cfg.update('window', 100000, vscode.ConfigurationTarget.Workspace);
    const changed = await until('the server to apply the settings', () =>
      api.context.current?.session_budget_tokens === 100 && api.context.current.context.window === 100000 &&
      api.context.current);
    res.configured = check('settings', {
      session_budget_tokens: changed.session_budget_tokens, window: changed.context.window,
      status_text: api.statusBar.item.text, status_warning: api.statusBar.item.backgroundColor?.id ?? null });
    await cfg.update('check.session_budget_tokens', undefined, vscode.ConfigurationTarget.Workspace);
    await cfg.update('window', undefined, vscode.ConfigurationTarget.Workspace);
    const reset = await until('the settings to be unset', () =>
      api.context.current?.session_budget_tokens === 10000 && api.context.current.context.window === 200000 &&
      api.context.current);
    res.reset_status_text = check('settings unset', api.statusBar.item.text);
    res.reset_window = reset.context.window;

    // the context report opens as a markdown document
    const report = await vscode.commands.executeCommand('ctxls.showContextReport');
    res.report_uri = check('context report', report?.uri ?? null);
    res.report_visible = await until('the report editor', () =>
      vscode.window.visibleTextEditors.some((e) => e.document.uri.path.endsWith('.ctxls/reports/context.md')), 15000)
      .catch(() => false);

    // a fact for the agent's memory (the context engine's remember, through the palette command)
    res.remembered = check('remember', await vscode.commands.executeCommand('ctxls.remember',
                                                                            'The staging database is on port 5433.'));

    // restart: a new client, running, that publishes again
    const before = api.client();
    await vscode.commands.executeCommand('ctxls.restartServer');
    res.restarted = check('restart', api.client() !== before && api.client()?.isRunning() === true);
    await open('services/billing/CLAUDE.md');
    res.diagnostics_after_restart = (await until('diagnostics after the restart', () => {
      const ds = vscode.languages.getDiagnostics(billing.uri).filter((d) => d.source === 'ctxls');
      return ds.length && ds;
    })).map((d) => String(d.code?.value ?? d.code));

    // changing a ctxls.server.* setting restarts the server
    const before2 = api.client();
    await cfg.update('server.path', cfg.get('server.path'), vscode.ConfigurationTarget.Workspace);
    res.restarted_on_setting = check('restart on a setting change', await until('a new client', () =>
      api.client() !== before2 && api.client()?.isRunning() === true, 30000).catch(() => false));
    await cfg.update('server.path', undefined, vscode.ConfigurationTarget.Workspace);
    res.ok = true;
  } catch (e) {
    res.error = String((e && e.stack) || e);
    throw e;
  } finally {
    res.elapsed_ms = Date.now() - t0;
    fs.writeFileSync(process.env.API_RESULT_JSON, JSON.stringify(res, null, 2));
  }
};
