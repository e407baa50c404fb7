// What the extension and the server exchange beyond standard LSP (server side: server/ctxls/lsp/context.py).
import * as vscode from 'vscode';

/** `ctxls/context` request: the session an agent (`agent`, default Claude Code) started in the file's directory
 * holds, and what reading the file appends. */
export const CONTEXT_REQUEST = 'ctxls/context';
/** Notification the server sends after every check, when the context may have changed. */
export const CONTEXT_CHANGED = 'ctxls/contextChanged';

export interface ContextParams {
  uri: string;
  /** a profile of the server's core/profiles (AGENTS below); the server answers null for an unknown one */
  agent?: string;
}

/** The server's agent profiles, in its table order (core/profiles AGENTS, core/model.py AGENT_NAMES): what the
 * picker offers before the server has said so itself (ContextResult.agents). */
export const AGENTS: ReadonlyArray<{ id: string; name: string }> = [
  { id: 'claude-code', name: 'Claude Code' }, { id: 'codex', name: 'Codex' }, { id: 'cursor', name: 'Cursor' },
  { id: 'copilot', name: 'Copilot' }, { id: 'gemini', name: 'Gemini CLI' },
];
export const DEFAULT_AGENT = 'claude-code';

export interface AgentsInfo {
  all: Array<{ id: string; name: string }>;
  /** the agents the workspace targets: `[check] agents` when set, else those whose files exist */
  targeted: string[];
  targeted_by: 'check.agents' | 'files';
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
  skipped: Skipped[];
  /** the profile (the server sends it since the agent profiles) */
  agent?: string;
}

/** A file the session does not load (or not yet: `when` says on what, for the other agents' profiles). */
export interface Skipped {
  source: string | null;
  kind: string;
  trigger: string;
  reason: string;
  when?: string;
}

export interface ContextResult {
  /** absolute workspace root; block sources are relative to it unless absolute */
  root: string;
  /** the session budget in force (check.session_budget_tokens), instruction tokens, fixed overhead excluded */
  session_budget_tokens: number;
  /** startup tokens minus the fixed overhead (system prompt and tool schemas) */
  instruction_tokens: number;
  context: ContextJson;
  /** the agent answered for, and what an agent picker offers (servers before the agent profiles send neither) */
  agent?: string;
  agents?: AgentsInfo;
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
