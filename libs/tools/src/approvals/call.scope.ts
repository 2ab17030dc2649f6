import type { GrantOffer, TellingArgument } from '@parley/contracts';
import { requestHost } from '../http/http-request.tool';
import { normaliseWorkspacePath } from '../workspace.path';
import { analyseCommandLine, describeCommandKeys, type SimpleCommand } from '../shell/command-line';

/** One thing a call does that must be granted (or be a safe command): any one of `keys` grants it. */
export interface GrantNeed {
  keys: string[];
  /** Shell: the simple command this need stands for (safe commands are matched on it). */
  command?: SimpleCommand;
}

/** What a call does, read from its (already validated) arguments: shown to the approver and used to match grants. */
export interface CallScope {
  telling: TellingArgument;
  /** One line for the approver: "Run shell command: ls && git status". */
  summary: string;
  /** Empty when the call can never be covered by a grant or a safe command. */
  needs: GrantNeed[];
  offer: GrantOffer;
}

const FILE_TOOLS: ReadonlySet<string> = new Set(['read_file', 'write_file', 'delete_file']);

export function isFileTool(tool: string): boolean {
  return FILE_TOOLS.has(tool);
}

export const grantKey = {
  command: (key: string) => `shell:cmd:${key}`,
  path: (tool: string, path: string) => `${tool}:path:${path}`,
  /** `folder` is "" (the whole workspace) or ends with "/". */
  folder: (tool: string, folder: string) => `${tool}:dir:${folder}`,
  host: (method: string, host: string) => `http_request:host:${method} ${host}`,
};

/** "a/b/c.md" → ["", "a/", "a/b/"]: the folders an approver may grant instead of the file itself. */
export function foldersOf(path: string): string[] {
  const parts = path.split('/').slice(0, -1);
  return ['', ...parts.map((_, i) => `${parts.slice(0, i + 1).join('/')}/`)];
}

export function describeCall(tool: string, input: Record<string, unknown>): CallScope {
  if (tool === 'shell') {
    return shellScope(String(input.command));
  }
  if (FILE_TOOLS.has(tool)) {
    // Grants are keyed on the path's one canonical spelling, the one the tool itself will use.
    const path = normaliseWorkspacePath(String(input.path));
    return fileScope(tool, path.ok ? path.value : String(input.path));
  }
  if (tool === 'http_request') {
    return httpScope(input.method === 'POST' ? 'POST' : 'GET', new URL(String(input.url)));
  }
  const whole: TellingArgument = { label: 'path', value: '(the whole workspace)' };
  const key = `${tool}:all`;
  return { telling: whole, summary: `Call ${tool}`, needs: [{ keys: [key] }], offer: { reusable: true, keys: [key], description: `${tool} (any arguments)` } };
}

function shellScope(command: string): CallScope {
  const telling: TellingArgument = { label: 'command', value: command };
  const summary = `Run shell command: ${command}`;
  const analysis = analyseCommandLine(command);
  if (!analysis.reusable) {
    return { telling, summary, needs: [], offer: { reusable: false, reason: `This command offers no reusable grant: ${analysis.reason}.` } };
  }
  const keys = analysis.commands.map((c) => c.key as string);
  return {
    telling,
    summary,
    needs: analysis.commands.map((c) => ({ keys: [grantKey.command(c.key as string)], command: c })),
    offer: { reusable: true, keys: [...new Set(keys.map(grantKey.command))], description: describeCommandKeys([...new Set(keys)]) },
  };
}

function fileScope(tool: string, path: string): CallScope {
  const folders = foldersOf(path);
  const exact = grantKey.path(tool, path);
  return {
    telling: { label: 'path', value: path },
    summary: `${tool} ${path}`,
    needs: [{ keys: [exact, ...folders.map((folder) => grantKey.folder(tool, folder))] }],
    offer: { reusable: true, keys: [exact], description: `${tool} on ${path}`, directories: folders },
  };
}

function httpScope(method: string, url: URL): CallScope {
  const host = requestHost(url);
  const key = grantKey.host(method, host);
  return {
    telling: { label: 'host', value: host },
    summary: `HTTP ${method} ${url.toString()}`,
    needs: [{ keys: [key] }],
    offer: { reusable: true, keys: [key], description: `${method} requests to ${host}` },
  };
}

/** The grant-set members that hold a key for a scope: run grants, or grants of one stage. */
export const grantMember = {
  run: (key: string) => `run|${key}`,
  stage: (stage: string, key: string) => `stage|${stage}|${key}`,
};

/** The members that grant `key` in `stage`: a run grant, or a grant of that stage. */
export function membersGranting(key: string, stage: string): string[] {
  return [grantMember.run(key), grantMember.stage(stage, key)];
}

/** Every member whose presence would grant some need, for one lookup in the run's grant set. */
export function membersToLookUp(needs: readonly GrantNeed[], stage: string): string[] {
  return [...new Set(needs.flatMap((need) => need.keys.flatMap((key) => membersGranting(key, stage))))];
}
