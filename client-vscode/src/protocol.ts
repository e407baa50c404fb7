// What the extension and the server exchange beyond standard LSP (server side: server/ctxls/lsp/context.py).
import * as vscode from 'vscode';

/** `ctxls/context` request: the session a Claude Code agent started in the file's directory holds, and what
 * reading the file appends. */
export const CONTEXT_REQUEST = 'ctxls/context';
/** Notification the server sends after every check, when the context may have changed. */
export const CONTEXT_CHANGED = 'ctxls/contextChanged';

export interface ContextParams {
  uri: string;
}

/** One block of `ctxls.context/1` (README: "JSON schema of `ctxls context --format json`"). */
export interface Block {
  kind: string;
  source: string | null;
  tier: string | null;
  lines: [number, number] | null;
  trigger: string;
  tokens: number;
  cumulative: number;
  estimated: boolean;
  startup: boolean;
  cut?: string;
  notes?: string[];
}

export interface ContextJson {
  schema: 'ctxls.context/1';
  start_dir: string;
  touched: string[];
  window: number;
  total_tokens: number;
  startup_tokens: number;
  percent_of_window: number | null;
  token_method: string;
  blocks: Block[];
  skipped: Array<{ source: string | null; kind: string; trigger: string; reason: string }>;
}

export interface ContextResult {
  /** absolute workspace root; block sources are relative to it unless absolute */
  root: string;
  /** the session budget in force (check.session_budget_tokens), instruction tokens, fixed overhead excluded */
  session_budget_tokens: number;
  /** startup tokens minus the fixed overhead (system prompt and tool schemas) */
  instruction_tokens: number;
  context: ContextJson;
}

/** Settings the server reads (workspace/configuration section `ctxls`); the rest are the extension's own. */
const SERVER_KEYS = [
  'window', 'model', 'home',
  'check.session_budget_tokens', 'check.file_budget_tokens', 'check.ignore',
  'agent.model', 'agent.maxTurns', 'agent.yesTo',
];

/** The `ctxls` section as the server should see it: only what the user set (at any level), nested by dots,
 * so a package.json default never overrides the workspace's .ctxls.toml. */
export function serverSettings(scope?: vscode.Uri): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('ctxls', scope);
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const i = cfg.inspect(key);
    const value = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    if (value === undefined || value === '' || value === null) {
      continue;
    }
    const parts = key.split('.');
    let obj = out;
    for (const p of parts.slice(0, -1)) {
      obj = (obj[p] ??= {}) as Record<string, unknown>;
    }
    obj[parts[parts.length - 1]] = value;
  }
  return out;
}
