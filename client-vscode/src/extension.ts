// ctxls for VS Code: starts `ctxls serve` over stdio and shows what an agent started here would load.
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State,
} from 'vscode-languageclient/node';
import { AGENT_ASK, askAgent, fixDiagnostic, promptFor, rememberFact } from './agent';
import { PICK_AGENT, pickAgent } from './agentPicker';
import { ContextModel } from './contextModel';
import { ContextView } from './contextView';
import { findServer, showServerMissing } from './launch';
import { CONTEXT_CHANGED, serverSettings } from './protocol';
import { ContextStatusBar } from './statusBar';

/** Instruction, rule, skill and memory files: what the server gets as documents (and publishes diagnostics
 * for). Hover and code lens on every other file go through `SourceFileProviders` below. */
export const DOCUMENT_SELECTOR: Array<{ scheme: string; language?: string; pattern?: string }> = [
  { scheme: 'file', language: 'markdown' },
  { scheme: 'file', pattern: '**/{CLAUDE.md,CLAUDE.local.md,AGENTS.md,AGENTS.override.md}' },
  { scheme: 'file', pattern: '**/.claude/**' },
  { scheme: 'file', pattern: '**/{.ctxls.toml,MEMORY.md}' },
];

/** What the extension gives other extensions and its own end-to-end tests. */
export interface CtxlsApi {
  client(): LanguageClient | undefined;
  context: ContextModel;
  statusBar: ContextStatusBar;
  view: ContextView;
  /** how the running server was started ("setting ctxls.server.path", ...), undefined when none */
  serverOrigin(): string | undefined;
}

let client: LanguageClient | undefined;
let origin: string | undefined;
let starting: Promise<void> | undefined;

export async function activate(ctx: vscode.ExtensionContext): Promise<CtxlsApi> {
  const output = vscode.window.createOutputChannel('ctxls');
  const log = (line: string) => output.appendLine(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  const model = new ContextModel(ctx.workspaceState);
  const statusBar = new ContextStatusBar(model);
  const view = new ContextView(model);
  ctx.subscriptions.push(output, model, statusBar, view);

  const start = async (): Promise<void> => {
    const found = await findServer(log);
    statusBar.noServer = !found;
    if (!found) {
      origin = undefined;
      model.setClient(undefined);
      void showServerMissing();
      return;
    }
    origin = found.origin;
    const serverOptions: ServerOptions = {
      // no `transport`: TransportKind.stdio would append --stdio, which `ctxls serve` does not take (stdio is its default)
      command: found.command, args: found.args,
      options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: output,
      traceOutputChannel: output,
      initializationOptions: serverSettings(),
      middleware: {
        // The server's "ctxls agent: Ask about this…" code actions leave the prompt to the client.
        executeCommand: async (command, args, next) => {
          if (command === AGENT_ASK && args[0] && typeof args[0] === 'object' && !args[0].prompt) {
            const prompt = await promptFor(args[0].range ? 'Ask about the selection…' : 'Ask about this file…');
            if (!prompt) {
              return undefined;
            }
            return next(command, [{ ...args[0], prompt }, ...args.slice(1)]);
          }
          return next(command, args);
        },
        workspace: {
          // The server asks for section `ctxls`: answer with what the user set, server keys only.
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            return params.items.map((item, i) =>
              item.section === 'ctxls'
                ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
                : answers[i]);
          },
        },
      },
    };
    const c = new LanguageClient('ctxls', 'ctxls', serverOptions, clientOptions);
    c.onDidChangeState((e) => {
      if (e.newState === State.Stopped) {
        model.setClient(undefined);
      }
    });
    client = c;
    try {
      await c.start();
    } catch (err) {
      log(`server failed to start: ${(err as Error).message}`);
      void vscode.window.showErrorMessage(`ctxls: the server failed to start: ${(err as Error).message}`);
      return;
    }
    ctx.subscriptions.push(c.onNotification(CONTEXT_CHANGED, () => void model.refresh()));
    model.setClient(c);
  };

  const restart = async (): Promise<void> => {
    await starting;
    const old = client;
    client = undefined;
    if (old) {
      model.setClient(undefined);
      await old.stop().catch((err: Error) => log(`stopping the server: ${err.message}`));
      await old.dispose().catch(() => undefined);
    }
    starting = start();
    await starting;
  };

  const serverCommand = async (command: string, args: unknown[]): Promise<unknown> => {
    await starting;
    if (!client || !client.isRunning()) {
      void vscode.window.showWarningMessage('ctxls: the server is not running (see the ctxls output).');
      return undefined;
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  };
  const activeUri = () => model.target()?.toString();

  ctx.subscriptions.push(
    // the report of the agent the view shows (the server's ctxls.contextReport takes it as its second argument)
    vscode.commands.registerCommand('ctxls.showContextReport', (uri?: vscode.Uri | string) =>
      serverCommand('ctxls.contextReport', [uri ? uri.toString() : activeUri(), model.agent])),
    vscode.commands.registerCommand(PICK_AGENT, (agent?: string) => pickAgent(model, agent)),
    vscode.commands.registerCommand('ctxls.showBudgetReport', () => serverCommand('ctxls.budgetReport', [])),
    vscode.commands.registerCommand('ctxls.checkWorkspace', async () => {
      const res = await serverCommand('ctxls.refresh', []);
      await vscode.commands.executeCommand('workbench.actions.view.problems');
      await model.refresh();
      return res;
    }),
    vscode.commands.registerCommand('ctxls.askAgent', async () => { await starting; return askAgent(client); }),
    vscode.commands.registerCommand('ctxls.fixDiagnosticWithAgent', async (uri?: string, diag?: vscode.Diagnostic) => {
      await starting;
      return fixDiagnostic(client, uri, diag);
    }),
    // the editor's agent session (the context engine): compaction, memory, the token ledger, a fresh start
    vscode.commands.registerCommand('ctxls.compactSession', () => serverCommand('ctxls.agent.compact', [])),
    vscode.commands.registerCommand('ctxls.remember', async (fact?: string) => {
      await starting;
      return rememberFact(client, fact);
    }),
    vscode.commands.registerCommand('ctxls.showSessionLedger', () => serverCommand('ctxls.agent.ledger', [])),
    vscode.commands.registerCommand('ctxls.newSession', () => serverCommand('ctxls.agent.newSession', [])),
    vscode.commands.registerCommand('ctxls.restartServer', restart),
    vscode.commands.registerCommand('ctxls.refreshContextView', () => model.refresh()),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('ctxls.server')) {
        log('server settings changed: restarting');
        await restart();
      } else if (e.affectsConfiguration('ctxls')) {
        statusBar.update();
        // `settings: null` makes the server ask again through workspace/configuration (the middleware above)
        await client?.sendNotification('workspace/didChangeConfiguration', { settings: null });
      }
    }),
    new SourceFileProviders(() => client),
  );

  starting = start();
  await starting;
  return { client: () => client, context: model, statusBar, view, serverOrigin: () => origin };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

/** Hover and code lens for files outside DOCUMENT_SELECTOR (source files): the server answers for any path
 * of the workspace (the context a session started there loads, and what reading the file appends), so these
 * forward the request without syncing the document. */
class SourceFileProviders implements vscode.Disposable {
  private readonly subs: vscode.Disposable[];

  constructor(private readonly getClient: () => LanguageClient | undefined) {
    const others: vscode.DocumentSelector = { scheme: 'file' };
    this.subs = [
      vscode.languages.registerHoverProvider(others, { provideHover: (d, p, t) => this.hover(d, p, t) }),
      vscode.languages.registerCodeLensProvider(others, { provideCodeLenses: (d, t) => this.lenses(d, t) }),
    ];
  }

  private ready(doc: vscode.TextDocument): LanguageClient | undefined {
    const c = this.getClient();
    if (!c || !c.isRunning() || vscode.languages.match(DOCUMENT_SELECTOR, doc) > 0) {
      return undefined; // the language client itself serves documents in the selector
    }
    return c;
  }

  private async hover(doc: vscode.TextDocument, pos: vscode.Position, token: vscode.CancellationToken) {
    const c = this.ready(doc);
    if (!c) {
      return undefined;
    }
    const res = await c.sendRequest('textDocument/hover', {
      textDocument: { uri: doc.uri.toString() }, position: c.code2ProtocolConverter.asPosition(pos),
    }, token);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return c.protocol2CodeConverter.asHover(res as any);
  }

  private async lenses(doc: vscode.TextDocument, token: vscode.CancellationToken) {
    const c = this.ready(doc);
    if (!c) {
      return undefined;
    }
    const res = await c.sendRequest('textDocument/codeLens', { textDocument: { uri: doc.uri.toString() } }, token);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return c.protocol2CodeConverter.asCodeLenses(res as any, token);
  }

  dispose(): void {
    this.subs.forEach((s) => s.dispose());
  }
}
