// The "Agent context (ctxls)" view in the explorer: the blocks a session started in the active file's
// directory holds (kind, source, trigger, tokens), then what reading the active file appends. Selecting a
// block with a source opens it at the loaded lines.
import * as path from 'path';
import * as vscode from 'vscode';
import { ContextModel, formatTokens } from './contextModel';
import { Block, ContextResult } from './protocol';

const KIND_LABELS: Record<string, string> = {
  system_prompt: 'system prompt', tool_schemas: 'tool schemas', context_header: 'context header',
  context_footer: 'context footer', claude_md: 'CLAUDE.md', agents_md: 'AGENTS.md', rule: 'rule',
  import: 'import', auto_memory: 'auto memory', skill_listing: 'skills listing', read: 'file read',
  nested_claude_md: 'nested CLAUDE.md', nested_agents_md: 'nested AGENTS.md', nested_rule: 'nested rule',
  path_rule: 'path rule',
};

type Node = { group: 'startup' | 'touch'; label: string; blocks: Block[] } | { block: Block };

export class ContextView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;
  readonly view: vscode.TreeView<Node>;

  constructor(private readonly model: ContextModel) {
    this.sub = model.onDidChange(() => this.changed.fire(undefined));
    this.view = vscode.window.createTreeView('ctxls.context', { treeDataProvider: this, showCollapseAll: true });
  }

  getChildren(node?: Node): Node[] {
    const res = this.model.current;
    if (!res) {
      return [];
    }
    if (!node) {
      const c = res.context;
      const startup = c.blocks.filter((b) => b.startup);
      const touch = c.blocks.filter((b) => !b.startup);
      const out: Node[] = [{ group: 'startup', label: `Startup in ${c.start_dir}`, blocks: startup }];
      if (c.touched.length) {
        out.push({ group: 'touch', label: `Reading ${c.touched[0]} appends`, blocks: touch });
      }
      return out;
    }
    return 'group' in node ? node.blocks.map((b) => ({ block: b })) : [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const res = this.model.current as ContextResult;
    const c = res.context;
    if ('group' in node) {
      const tokens = node.blocks.reduce((n, b) => n + b.tokens, 0);
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      item.description = node.group === 'startup'
        ? `${formatTokens(tokens)} tokens · ${((100 * tokens) / c.window).toFixed(1)}%`
        : `+${formatTokens(tokens)} tokens`;
      item.contextValue = `ctxls.group.${node.group}`;
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
