// The "Agent context (ctxls)" view in the explorer: the blocks a session of the picked agent (its name in the
// view's description) started in the active file's directory holds (kind, source, trigger, tokens), then what
// reading the active file appends, then what does not load. Selecting a block with a source opens it at the
// loaded lines (for Codex's 32 KiB cut, the lines up to where the cut falls).
import * as path from 'path';
import * as vscode from 'vscode';
import { ContextModel, formatTokens } from './contextModel';
import { Block, ContextResult, Skipped } from './protocol';

/** Block kinds as the server names them to people (core/model.py KIND_LABELS). */
const KIND_LABELS: Record<string, string> = {
  system_prompt: 'system prompt', tool_schemas: 'tool schemas', context_header: 'context header',
  context_footer: 'context footer', claude_md: 'CLAUDE.md', agents_md: 'AGENTS.md', rule: 'rule',
  import: 'import', auto_memory: 'auto memory', skill_listing: 'skills listing', read: 'file read',
  nested_claude_md: 'nested CLAUDE.md', nested_agents_md: 'nested AGENTS.md', nested_rule: 'nested rule',
  path_rule: 'path rule', global_instructions: 'global instructions', cursor_rule: 'Cursor rule',
  rule_listing: 'rule listing', cursorrules: '.cursorrules', copilot_instructions: 'copilot-instructions.md',
  path_instructions: 'path instructions', gemini_md: 'GEMINI.md', nested_gemini_md: 'nested GEMINI.md',
};

type Group = 'startup' | 'touch' | 'skipped';
type Node =
  | { group: Group; label: string; blocks: Block[]; skipped: Skipped[] }
  | { block: Block }
  | { skip: Skipped }
  | { note: string; tooltip: string };

/** What reading the touched file appends (blocks), and the files it does not bring in although they are near
 * it (the agent's touch rules: Codex loads nothing below its start directory, Gemini CLI loads GEMINI.md just
 * in time, Cursor attaches rules by glob, Copilot by applyTo). */
function splitSkipped(c: ContextResult['context']): { touch: Skipped[]; other: Skipped[] } {
  const loaded = new Set(c.blocks.map((b) => b.source).filter((s): s is string => !!s));
  const notLoaded = c.skipped.filter((k) => !k.source || !loaded.has(k.source));
  return { touch: notLoaded.filter((k) => k.trigger.startsWith('touch:')),
           other: notLoaded.filter((k) => !k.trigger.startsWith('touch:')) };
}

export class ContextView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;
  readonly view: vscode.TreeView<Node>;

  constructor(private readonly model: ContextModel) {
    this.sub = model.onDidChange(() => {
      this.describe();
      this.changed.fire(undefined);
    });
    this.view = vscode.window.createTreeView('ctxls.context', { treeDataProvider: this, showCollapseAll: true });
    this.describe();
  }

  /** The view's description names the agent whose session it shows ("Agent context (ctxls) Codex"). */
  private describe(): void {
    const agent = this.model.current?.agent ?? this.model.current?.context.agent ?? this.model.agent;
    this.view.description = this.model.agentName(agent);
    this.view.message = !this.model.current && this.model.error ? `ctxls: ${this.model.error}` : undefined;
  }

  getChildren(node?: Node): Node[] {
    const res = this.model.current;
    if (!res) {
      return [];
    }
    if (!node) {
      const c = res.context;
      const { touch: touchSkipped, other } = splitSkipped(c);
      const startup = c.blocks.filter((b) => b.startup);
      const touch = c.blocks.filter((b) => !b.startup);
      const out: Node[] = [{ group: 'startup', label: `Startup in ${c.start_dir}`, blocks: startup, skipped: [] }];
      if (c.touched.length) {
        out.push({ group: 'touch', label: `Reading ${c.touched[0]} appends`, blocks: touch, skipped: touchSkipped });
      }
      if (other.length) {
        out.push({ group: 'skipped', label: `Not loaded (${other.length})`, blocks: [], skipped: other });
      }
      return out;
    }
    if (!('group' in node)) {
      return [];
    }
    const rows: Node[] = [...node.blocks.map((b) => ({ block: b })), ...node.skipped.map((k) => ({ skip: k }))];
    const name = this.model.agentName(res.agent ?? res.context.agent);
    if (node.group === 'startup' && !node.blocks.length) {
      rows.push({ note: 'nothing loads at startup',
                  tooltip: `${name} finds no instruction file of its own for ${res.context.start_dir}.` });
    }
    if (node.group === 'touch' && !node.blocks.some((b) => b.kind !== 'read')) {
      rows.push({ note: 'no instructions appended',
                  tooltip: `${name} loads no instruction file when it reads ${res.context.touched[0]}` +
                    (node.skipped.length ? ': see the files below it, and why.' : '.') });
    }
    return rows;
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const res = this.model.current as ContextResult;
    const c = res.context;
    if ('group' in node) {
      const tokens = node.blocks.reduce((n, b) => n + b.tokens, 0);
      const item = new vscode.TreeItem(node.label, node.group === 'skipped'
        ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
      item.description = node.group === 'startup'
        ? `${formatTokens(tokens)} tokens · ${((100 * tokens) / c.window).toFixed(1)}%`
        : node.group === 'touch' ? `+${formatTokens(tokens)} tokens` : undefined;
      item.contextValue = `ctxls.group.${node.group}`;
      const name = this.model.agentName(res.agent ?? c.agent);
      if (node.group === 'startup') {
        // Cursor runs in the editor: the server starts its session at the workspace folder, not the file's directory
        const file = c.touched[0];
        const elsewhere = file !== undefined && path.posix.dirname(file) !== c.start_dir &&
          !(c.start_dir === '.' && !file.includes('/'));
        item.tooltip = `What ${name} loads before the first prompt in a session started in ${c.start_dir}` +
          (elsewhere ? ` (${name} runs in the editor: its session starts at the workspace folder, whichever file is open)` : '');
      } else if (node.group === 'skipped') {
        item.tooltip = `Files near here that ${name} does not load in this session, and why`;
      }
      return item;
    }
    if ('note' in node) {
      const item = new vscode.TreeItem(node.note, vscode.TreeItemCollapsibleState.None);
      item.iconPath = new vscode.ThemeIcon('info');
      item.tooltip = node.tooltip;
      item.contextValue = 'ctxls.note';
      return item;
    }
    if ('skip' in node) {
      const k = node.skip;
      const kind = KIND_LABELS[k.kind] ?? k.kind;
      const item = new vscode.TreeItem(k.source ? `${kind}: ${k.source}` : kind, vscode.TreeItemCollapsibleState.None);
      item.description = `not loaded · ${k.reason}`;
      item.tooltip = new vscode.MarkdownString(`**not loaded**${k.source ? ` \`${k.source}\`` : ''}\n\n${k.reason}` +
        (k.when ? `\n\nloads: ${k.when}` : ''));
      item.iconPath = new vscode.ThemeIcon('circle-slash');
      item.contextValue = `ctxls.skipped.${k.kind}`;
      if (k.source && !/not found|does not exist/.test(k.reason)) {
        const file = vscode.Uri.file(path.isAbsolute(k.source) ? k.source : path.join(res.root, k.source));
        item.resourceUri = file;
        item.command = { title: 'Open source', command: 'vscode.open',
                         arguments: [file, { preview: true } satisfies vscode.TextDocumentShowOptions] };
      }
      return item;
    }
    const b = node.block;
    const kind = KIND_LABELS[b.kind] ?? b.kind;
    const item = new vscode.TreeItem(b.source ? `${kind}: ${b.source}` : kind, vscode.TreeItemCollapsibleState.None);
    const est = b.estimated ? '~' : '';
    item.description = `${est}${b.tokens.toLocaleString('en-US')} tokens · ${b.trigger}`;
    const lines = b.lines ? ` lines ${b.lines[0]}–${b.lines[1]}` : '';
    item.tooltip = new vscode.MarkdownString(
      `**${kind}**${b.tier ? ` (${b.tier})` : ''} ${b.source ? `\`${b.source}\`${lines}` : ''}\n\n` +
        `trigger: ${b.trigger} · ${est}${b.tokens.toLocaleString('en-US')} tokens · running total ` +
        `${b.cumulative.toLocaleString('en-US')} (${((100 * b.cumulative) / c.window).toFixed(1)}%)` +
        (b.cut ? `\n\ncut: ${b.cut}` : '') + (b.notes?.length ? `\n\n${b.notes.map((n) => `- ${n}`).join('\n')}` : ''));
    item.contextValue = `ctxls.block.${b.kind}`;
    if (b.source) {
      const file = vscode.Uri.file(path.isAbsolute(b.source) ? b.source : path.join(res.root, b.source));
      item.resourceUri = file;
      // the loaded lines, whole (the editor clamps the end to the line's length)
      const selection = b.lines ? new vscode.Range(b.lines[0] - 1, 0, b.lines[1] - 1, 100_000) : undefined;
      item.command = { title: 'Open source', command: 'vscode.open',
                       arguments: [file, { selection, preview: true } satisfies vscode.TextDocumentShowOptions] };
    }
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.view.dispose();
    this.changed.dispose();
  }
}
