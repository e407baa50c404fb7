// "ctxls: Show context for agent…": a QuickPick of the server's agent profiles, marking the ones the workspace
// targets (their files exist, or `[check] agents` of .ctxls.toml) and the current one. The choice is kept per
// workspace (ContextModel.setAgent); the context view, its title and the status bar then show that agent.
import * as vscode from 'vscode';
import { ContextModel } from './contextModel';
import { AGENTS } from './protocol';

export const PICK_AGENT = 'ctxls.pickAgent';

interface AgentItem extends vscode.QuickPickItem {
  id: string;
}

/** The picker's rows, in the server's table order. */
export function agentItems(model: ContextModel): AgentItem[] {
  const info = model.agents;
  const current = model.agent;
  return (info?.all ?? AGENTS).map((a) => {
    const targeted = info?.targeted.includes(a.id) ?? false;
    const marks = [a.id];
    if (targeted) {
      marks.push(info?.targeted_by === 'check.agents' ? 'targeted ([check] agents)' : 'targeted (its files are here)');
    }
    if (a.id === current) {
      marks.push(model.agentOrigin === 'picked' ? 'current' : 'current (setting ctxls.context.agent)');
    }
    return {
      id: a.id,
      label: a.id === current ? `$(check) ${a.name}` : a.name,
      description: marks.join(' · '),
      detail: info && !targeted
        ? (info.targeted_by === 'check.agents' ? 'not in [check] agents of .ctxls.toml' : 'no files of this agent in the workspace')
        : undefined,
    };
  });
}

/** Pick an agent (``agent`` given: no UI, for keybindings and tests). Resolves to the agent shown afterwards. */
export async function pickAgent(model: ContextModel, agent?: string): Promise<string | undefined> {
  if (typeof agent === 'string') {
    await model.setAgent(agent);
    return model.agent;
  }
  const items = agentItems(model);
  const qp = vscode.window.createQuickPick<AgentItem>();
  qp.title = 'ctxls: Show context for agent…';
  qp.placeholder = `The agent whose session the Agent context view and the status bar show (now ${model.agentName()})`;
  qp.items = items;
  qp.activeItems = items.filter((i) => i.id === model.agent);
  qp.matchOnDescription = true;
  const chosen = await new Promise<AgentItem | undefined>((resolve) => {
    qp.onDidAccept(() => resolve(qp.selectedItems[0] ?? qp.activeItems[0]));
    qp.onDidHide(() => resolve(undefined));
    qp.show();
  });
  qp.dispose();
  if (!chosen) {
    return undefined;
  }
  await model.setAgent(chosen.id);
  return chosen.id;
}
