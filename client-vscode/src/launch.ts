// Finding the server: the ctxls.server.path setting, then ctxls.server.pythonPath, then the Python
// extension's active interpreter, then `ctxls` on PATH. Each candidate is probed (`--version`) before it is
// used, so a stale setting falls through to the next one and the output channel says why.
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';

export interface ServerCommand {
  command: string;
  args: string[];
  /** where it came from, for the output channel ("setting ctxls.server.path", "PATH", ...) */
  origin: string;
}

export const INSTALL_COMMAND = 'python3 -m pip install ctxls';

/** Runs `command args --version` and resolves to its output, or rejects with a one-line reason. */
function probe(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, [...args, '--version'], { timeout: 20000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error((stderr || err.message).trim().split('\n').pop() || String(err)));
      } else {
        resolve(stdout.trim());
      }
    });
  });
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const cand = path.join(dir, name);
    try {
      fs.accessSync(cand, fs.constants.X_OK);
      if (fs.statSync(cand).isFile()) {
        return cand;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The Python extension's interpreter for `resource`, when that extension is installed. */
async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const api: any = ext.isActive ? ext.exports : await ext.activate();
    const envs = api?.environments;
    if (envs?.getActiveEnvironmentPath) {
      const active = envs.getActiveEnvironmentPath(resource);
      const resolved = await envs.resolveEnvironment(active);
      const exe = resolved?.executable?.uri?.fsPath ?? active?.path;
      if (typeof exe === 'string' && exe) {
        return exe;
      }
    }
    const details = api?.settings?.getExecutionDetails?.(resource); // the older API
    const cmd = details?.execCommand?.[0];
    return typeof cmd === 'string' && cmd ? cmd : undefined;
  } catch {
    return undefined;
  }
}

function expand(p: string): string {
  if (p.startsWith('~/')) {
    return path.join(process.env.HOME || '', p.slice(2));
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return folder ? p.replace('${workspaceFolder}', folder) : p;
}

export async function findServer(log: (line: string) => void): Promise<ServerCommand | undefined> {
  const cfg = vscode.workspace.getConfiguration('ctxls');
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const candidates: Array<() => Promise<ServerCommand | undefined>> = [
    async () => {
      const p = cfg.get<string>('server.path', '').trim();
      return p ? { command: expand(p), args: [], origin: 'setting ctxls.server.path' } : undefined;
    },
    async () => {
      const p = cfg.get<string>('server.pythonPath', '').trim();
      return p ? { command: expand(p), args: ['-m', 'ctxls'], origin: 'setting ctxls.server.pythonPath' } : undefined;
    },
    async () => {
      const py = await pythonExtensionInterpreter(resource);
      return py ? { command: py, args: ['-m', 'ctxls'], origin: "the Python extension's interpreter" } : undefined;
    },
    async () => {
      const p = onPath(process.platform === 'win32' ? 'ctxls.exe' : 'ctxls');
      return p ? { command: p, args: [], origin: 'ctxls on PATH' } : undefined;
    },
  ];
  log(`looking for the server: ctxls.server.path=${JSON.stringify(cfg.get('server.path'))}, ` +
      `ctxls.server.pythonPath=${JSON.stringify(cfg.get('server.pythonPath'))}`);
  for (const next of candidates) {
    const cand = await next();
    if (!cand) {
      continue;
    }
    try {
      const version = await probe(cand.command, cand.args);
      log(`server: ${[cand.command, ...cand.args].join(' ')} (${cand.origin}): ${version}`);
      return { ...cand, args: [...cand.args, 'serve'] };
    } catch (err) {
      log(`server: ${[cand.command, ...cand.args].join(' ')} (${cand.origin}) does not run: ${(err as Error).message}`);
    }
  }
  return undefined;
}

/** The one notification shown when no server could be found. */
export async function showServerMissing(): Promise<void> {
  const open = 'Open setting';
  const copy = 'Copy install command';
  const pick = await vscode.window.showErrorMessage(
    `ctxls: the language server was not found. Install it with \`${INSTALL_COMMAND}\`, ` +
      'or set ctxls.server.path to the ctxls executable.', open, copy);
  if (pick === open) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'ctxls.server.path');
  } else if (pick === copy) {
    await vscode.env.clipboard.writeText(INSTALL_COMMAND);
  }
}
