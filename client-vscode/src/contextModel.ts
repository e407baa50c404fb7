// The context of the active editor's directory, fetched with `ctxls/context` on editor change and whenever
// the server says it re-checked. The status bar and the context view both show it.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { CONTEXT_REQUEST, ContextParams, ContextResult } from './protocol';

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

  constructor() {
    this.subs.push(vscode.window.onDidChangeActiveTextEditor(() => this.refresh()));
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
      const params: ContextParams = { uri: uri.toString() };
      const res = await client.sendRequest<ContextResult | null>(CONTEXT_REQUEST, params);
      if (mine !== this.seq) {
        return; // a newer request is on its way
      }
      this.current = res ?? undefined;
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
