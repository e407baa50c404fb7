// The agent commands. The server runs the agent loop (`ctxls.agent.ask`, arguments
// [{prompt, uri, range?}]); its edits come back as workspace/applyEdit with needsConfirmation annotations, so
// VS Code's refactor preview shows the diff first, and its progress as work-done progress.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';

export const AGENT_ASK = 'ctxls.agent.ask';

export interface AskArgs {
  prompt: string;
  uri: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

function lspRange(r: vscode.Range): AskArgs['range'] {
  return { start: { line: r.start.line, character: r.start.character },
           end: { line: r.end.line, character: r.end.character } };
}

export async function promptFor(placeHolder: string, value?: string): Promise<string | undefined> {
  const prompt = await vscode.window.showInputBox({
    title: 'ctxls: ask the agent', prompt: 'What should the agent do?', placeHolder, value, ignoreFocusOut: true,
  });
  return prompt?.trim() ? prompt.trim() : undefined;
}

export async function runAgent(client: LanguageClient | undefined, args: AskArgs): Promise<unknown> {
  return runServer(client, AGENT_ASK, [args]);
}

/** ctxls: Ask agent: an input box for the prompt, about the selection (or the whole file). */
export async function askAgent(client: LanguageClient | undefined): Promise<unknown> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('ctxls: open a file to ask the agent about.');
    return undefined;
  }
  const sel = editor.selection;
  const prompt = await promptFor(sel.isEmpty ? 'Ask about this file…' : 'Ask about the selection…');
  if (!prompt) {
    return undefined;
  }
  return runAgent(client, { prompt, uri: editor.document.uri.toString(),
                            ...(sel.isEmpty ? {} : { range: lspRange(sel) }) });
}

/** ctxls: Fix this diagnostic with the agent: the ctxls diagnostic under the cursor, the prompt prefilled. */
export async function fixDiagnostic(client: LanguageClient | undefined, uriArg?: string,
                                    diagArg?: vscode.Diagnostic): Promise<unknown> {
  const editor = vscode.window.activeTextEditor;
  const uri = uriArg ? vscode.Uri.parse(uriArg) : editor?.document.uri;
  if (!uri) {
    return undefined;
  }
  let diag = diagArg;
  if (!diag) {
    const at = editor?.selection.active;
    const ours = vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'ctxls');
    diag = ours.find((d) => at && d.range.contains(at)) ?? ours.find((d) => at && d.range.start.line === at.line);
    if (!diag && ours.length) {
      const picked = await vscode.window.showQuickPick(
        ours.map((d) => ({ label: `${d.code ?? ''} line ${d.range.start.line + 1}`, description: d.message, d })),
        { title: 'ctxls: which diagnostic?' });
      diag = picked?.d;
    }
  }
  if (!diag) {
    void vscode.window.showInformationMessage('ctxls: no ctxls diagnostic here.');
    return undefined;
  }
  const code = typeof diag.code === 'object' ? diag.code.value : diag.code;
  const prompt = await promptFor('Fix this diagnostic', `Fix this diagnostic: ${code ?? ''} ${diag.message}`.trim());
  if (!prompt) {
    return undefined;
  }
  return runAgent(client, { prompt, uri: uri.toString(), range: lspRange(diag.range) });
}

/** ctxls: Remember…: `fact` when given (other extensions, tests), else the selection, else an input box. */
export async function rememberFact(client: LanguageClient | undefined, fact?: string): Promise<unknown> {
  const editor = vscode.window.activeTextEditor;
  if (typeof fact !== 'string' || !fact.trim()) {
    if (editor && !editor.selection.isEmpty) {
      return runServer(client, 'ctxls.agent.remember', [{ uri: editor.document.uri.toString(),
                                                        range: lspRange(editor.selection) }]);
    }
    fact = (await vscode.window.showInputBox({ title: 'ctxls: remember', prompt: 'A fact for the agent\'s memory',
                                               ignoreFocusOut: true }))?.trim();
    if (!fact) {
      return undefined;
    }
  }
  return runServer(client, 'ctxls.agent.remember', [{ fact }]);
}

export function runServer(client: LanguageClient | undefined, command: string, args: unknown[]): Promise<unknown> {
  if (!client || !client.isRunning()) {
    void vscode.window.showWarningMessage('ctxls: the server is not running.');
    return Promise.resolve(undefined);
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}
