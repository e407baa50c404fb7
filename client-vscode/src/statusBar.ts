// "ctx 4.2K · 2.1%": what an agent started in the active file's directory loads before the first prompt, in
// the warning colour when its instructions are over the session budget. A click opens the context report.
// It follows the agent picked for the context view ("ctx 60 · 0.0% · Codex"): one agent at a time, the same
// in both places, so the figure and the view's blocks always add up.
import * as vscode from 'vscode';
import { ContextModel, formatTokens } from './contextModel';

export class ContextStatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  /** set when no server could be started: the item says so instead of waiting */
  noServer = false;
  private readonly sub: vscode.Disposable;

  constructor(private readonly model: ContextModel) {
    this.item = vscode.window.createStatusBarItem('ctxls.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'ctxls context';
    this.item.command = 'ctxls.showContextReport';
    this.sub = model.onDidChange(() => this.update());
    this.update();
  }

  update(): void {
    if (!vscode.workspace.getConfiguration('ctxls').get<boolean>('statusBar.enabled', true)) {
      this.item.hide();
      return;
    }
    const res = this.model.current;
    if (!res && this.noServer) {
      this.item.text = '$(warning) ctx: no server';
      this.item.tooltip = 'ctxls: the language server was not found (see the ctxls output). Click to try again.';
      this.item.command = 'ctxls.restartServer';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      this.item.show();
      return;
    }
    this.item.command = 'ctxls.showContextReport';
    if (!res) {
      this.item.text = '$(loading~spin) ctx';
      this.item.tooltip = this.model.error ? `ctxls: ${this.model.error}` : 'ctxls: waiting for the server';
      this.item.backgroundColor = undefined;
      this.item.show();
      return;
    }
    const c = res.context;
    const agent = res.agent ?? c.agent ?? 'claude-code';
    const claude = agent === 'claude-code';
    const name = this.model.agentName(agent);
    const pct = c.window ? (100 * c.startup_tokens) / c.window : 0;
    const over = res.instruction_tokens > res.session_budget_tokens;
    this.item.text = `ctx ${formatTokens(c.startup_tokens)} · ${pct.toFixed(1)}%${claude ? '' : ` · ${name}`}`;
    this.item.backgroundColor = over ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    const md = new vscode.MarkdownString(
      `**ctxls**: ${claude ? 'an agent' : name} started in \`${c.start_dir}\` loads ` +
        `**${c.startup_tokens.toLocaleString('en-US')} tokens** ` +
        `before the first prompt (${pct.toFixed(1)}% of ${c.window.toLocaleString('en-US')})` +
        (claude ? '.\n\n' : `; instruction files only (ctxls does not count ${name}'s own system prompt and tools).\n\n`) +
        `Instructions: ${res.instruction_tokens.toLocaleString('en-US')} of a budget of ` +
        `${res.session_budget_tokens.toLocaleString('en-US')} tokens${over ? ' — **over budget**' : ''}.\n\n` +
        `Tokens: ${c.token_method}. Click for the context report; **ctxls: Show context for agent…** picks another agent.`);
    this.item.tooltip = md;
    this.item.show();
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
