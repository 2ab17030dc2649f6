import { checkInput, type Checked } from './tool.input';
import { errorResult, okResult, type ToolResult } from './tool-result';
import type { WorkspaceToolName } from './tool.names';
import { DeleteFileInputSchema, ListFilesInputSchema, ReadFileInputSchema, WriteFileInputSchema } from './tool.schemas';
import { normaliseWorkspacePath } from './workspace.path';
import type { EffectOutcome, WorkspacePort } from './workspace.port';
import { utf8ByteLength } from './utf8';

export interface WorkspaceLimits {
  maxFileBytes: number;
  maxWorkspaceBytes: number;
}

export interface WorkspaceToolCall {
  name: WorkspaceToolName;
  input: unknown;
  /** The tool call's effect id; the store applies a write or delete once per effect id. */
  effectId: string;
  workspace: WorkspacePort;
  limits: WorkspaceLimits;
}

/**
 * Runs a workspace tool and gives its tool_result. Whatever the model got wrong comes back as an
 * error result; failures of the store itself (Redis down, lease lost) are thrown for the loop to handle.
 */
export async function executeWorkspaceTool(call: WorkspaceToolCall): Promise<ToolResult> {
  const { name, input, effectId, workspace, limits } = call;
  switch (name) {
    case 'list_files': {
      const checked = checkInput(name, ListFilesInputSchema, input ?? {});
      if (!checked.ok) {
        return errorResult(checked.error);
      }
      const files = [...(await workspace.list())].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const totalBytes = files.reduce((sum, file) => sum + file.bytes, 0);
      return okResult({
        files: files.map(({ path, bytes }) => ({ path, bytes })),
        totalBytes,
        maxWorkspaceBytes: limits.maxWorkspaceBytes,
      });
    }
    case 'read_file': {
      const args = withPath(checkInput(name, ReadFileInputSchema, input));
      if (!args.ok) {
        return errorResult(args.error);
      }
      const content = await workspace.read(args.value.path);
      return content === null ? errorResult(`file not found: ${args.value.path}`) : okResult({ path: args.value.path, content });
    }
    case 'write_file': {
      const args = withPath(checkInput(name, WriteFileInputSchema, input));
      if (!args.ok) {
        return errorResult(args.error);
      }
      const bytes = utf8ByteLength(args.value.content);
      if (bytes > limits.maxFileBytes) {
        return errorResult(`content is ${bytes} bytes, over the ${limits.maxFileBytes}-byte limit per file; nothing was written`);
      }
      return effectResult(await workspace.write(effectId, args.value.path, args.value.content));
    }
    case 'delete_file': {
      const args = withPath(checkInput(name, DeleteFileInputSchema, input));
      if (!args.ok) {
        return errorResult(args.error);
      }
      return effectResult(await workspace.delete(effectId, args.value.path));
    }
  }
}

function withPath<T extends { path: string }>(checked: Checked<T>): Checked<T> {
  if (!checked.ok) {
    return checked;
  }
  const path = normaliseWorkspacePath(checked.value.path);
  return path.ok ? { ok: true, value: { ...checked.value, path: path.value } } : path;
}

/**
 * A replayed effect reads exactly like the first application, so a resumed run sees the same result.
 * The store records that result as the tool_result text itself.
 */
function effectResult(outcome: EffectOutcome): ToolResult {
  switch (outcome.status) {
    case 'applied':
    case 'replayed':
      return { content: outcome.result, isError: false };
    case 'rejected':
      return errorResult(outcome.error);
  }
}
