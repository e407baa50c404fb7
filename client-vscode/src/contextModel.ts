// The context of the active editor's directory, fetched with `ctxls/context` on editor change and whenever
// the server says it re-checked, for one agent: the one picked for this workspace (ctxls.pickAgent, kept in
// workspaceState), else the `ctxls.context.agent` setting. The status bar and the context view both show it.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { AGENTS, AgentsInfo, CONTEXT_REQUEST, ContextParams, ContextResult, DEFAULT_AGENT } from './protocol';

/** workspaceState key of the agent picked for this workspace */
export const PICKED_AGENT_KEY = 'ctxls.context.agent';

export class ContextModel implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  current: ContextResult | undefined;
  /** the file the current context was asked for */
  uri: vscode.Uri | undefined;
  error: string | undefined;
  private client: LanguageClient | undefined;
  private seq = 0;
  private readonly subs: vscode.Disposable[] = [];

  /** the last agent list the server sent (the picker's marks); undefined until then */
  agents: AgentsInfo | undefined;

  constructor(private readonly memento: vscode.Memento) {
    this.subs.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.refresh()),
      vscode.workspace.onDidChangeConfiguration(async (e) => {
        if (e.affectsConfiguration('ctxls.context.agent')) {
          // the setting changed after an agent was picked here: the newer choice wins
          await this.memento.update(PICKED_AGENT_KEY, undefined);
          await this.refresh();
        }
      }),
    );
  }

  /** The agent the context is for: the one picked for this workspace, else the setting, else Claude Code. */
  get agent(): string {
    const picked = this.memento.get<string>(PICKED_AGENT_KEY);
    if (picked && isAgent(picked)) {
      return picked;
    }
    const set = vscode.workspace.getConfiguration('ctxls').get<string>('context.agent', DEFAULT_AGENT);
    return isAgent(set) ? set : DEFAULT_AGENT;
  }

  /** Where the agent comes from: the picker (this workspace) or the setting. */
  get agentOrigin(): 'picked' | 'setting' {
    const picked = this.memento.get<string>(PICKED_AGENT_KEY);
    return picked && isAgent(picked) ? 'picked' : 'setting';
  }

  /** Show ``agent``'s context from now on in this workspace (kept across reloads), and fetch it. */
  async setAgent(agent: string): Promise<void> {
    if (!isAgent(agent)) {
      throw new Error(`no agent profile ${JSON.stringify(agent)} (known: ${AGENTS.map((a) => a.id).join(', ')})`);
    }
    await this.memento.update(PICKED_AGENT_KEY, agent);
    await this.refresh();
  }

  agentName(agent = this.agent): string {
    return (this.agents?.all ?? AGENTS).find((a) => a.id === agent)?.name ?? agent;
  }

  setClient(client: LanguageClient | undefined): void {
    this.client = client;
    this.refresh();
  }

  /** The file whose directory the context is for: the active editor's, else the workspace folder. */
  target(): vscode.Uri | undefined {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc && doc.uri.scheme === 'file') {
      return doc.uri;
    }
    return this.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  }

  async refresh(): Promise<void> {
    const client = this.client;
    const uri = this.target();
    const mine = ++this.seq;
    if (!client || !client.isRunning() || !uri) {
      this.current = undefined;
      this.changed.fire();
      return;
    }
    try {
      const agent = this.agent;
      const params: ContextParams = { uri: uri.toString(), agent };
      const res = await client.sendRequest<ContextResult | null>(CONTEXT_REQUEST, params);
      if (mine !== this.seq) {
        return; // a newer request is on its way
      }
      this.current = res ?? undefined;
      this.agents = res?.agents ?? this.agents;
      this.uri = uri;
      this.error = undefined;
    } catch (err) {
      if (mine !== this.seq) {
        return;
      }
      this.current = undefined;
      this.error = (err as Error).message;
    }
    this.changed.fire();
  }

  dispose(): void {
    this.subs.forEach((s) => s.dispose());
    this.changed.dispose();
  }
}

export function isAgent(id: string): boolean {
  return AGENTS.some((a) => a.id === id);
}

/** 950, 4.2K, 1.2M */
export function formatTokens(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    return `${(n / 1000).toFixed(1)}K`;
  }
  return `${(n / 1_000_000).toFixed(1)}M`;
}
