import { z } from 'zod';
import type { EffectRecords } from '../effect.records';
import { checkInput } from '../tool.input';
import { errorResult, type ToolResult } from '../tool-result';
import { utf8ByteLength } from '../utf8';
import { disguisingCharacters } from './command-line';
import { runShellCommand, type ShellLimits, type ShellRun, type WorkspaceChanges } from './shell.runner';

export const SHELL_COMMAND_MAX_BYTES = 16 * 1024;

/** File lists in a result stop after this many entries each, with a count of the rest. */
const MAX_LISTED_FILES = 100;

export const ShellInputSchema = z.strictObject({
  command: z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : 'must be a string') })
    .refine((command) => command.trim() !== '', 'must not be empty')
    .refine((command) => utf8ByteLength(command) <= SHELL_COMMAND_MAX_BYTES, `must be at most ${SHELL_COMMAND_MAX_BYTES} bytes`)
    .refine((command) => !command.includes('\0'), { message: 'must not contain NUL characters', abort: true })
    // A `\r\x1b[2K` or a right-to-left override could show an approver another command than the one that runs.
    .refine((command) => disguisingCharacters(command) === null, 'control characters are not allowed (except newline and tab)')
    .describe(
      `The command line, run with /bin/sh -c in a folder holding the workspace files, e.g. "wc -l notes/*.md" (at most ${SHELL_COMMAND_MAX_BYTES} bytes)`,
    ),
});

export interface ShellWorkspace extends EffectRecords {
  /** Every file of the workspace (path → content). */
  snapshot(): Promise<Map<string, string>>;
}

export interface ShellToolCall {
  input: unknown;
  /** The tool call's effect id: the command's file changes and result are committed once under it. */
  effectId: string;
  workspace: ShellWorkspace;
  limits: ShellLimits;
}

/**
 * Runs the `shell` tool: the command runs on a scratch copy of the workspace, and its file changes are
 * committed together with the result under the effect id. A step retried after that commit gets the
 * recorded result back and does not run the command again. Failures of the store are thrown.
 */
export async function executeShellTool(call: ShellToolCall): Promise<ToolResult> {
  const { input, effectId, workspace, limits } = call;
  const checked = checkInput('shell', ShellInputSchema, input);
  if (!checked.ok) {
    return errorResult(checked.error);
  }
  const recorded = await workspace.recorded(effectId);
  if (recorded !== null) {
    return fromRecorded(recorded);
  }
  const run = await runShellCommand(checked.value.command, await workspace.snapshot(), limits);
  const { changes } = run;
  if ('refused' in changes) {
    return notKept(workspace, effectId, run, changes.refused);
  }
  const { writes, deletes } = changes;
  const outcome = await workspace.commit(effectId, { writes, deletes }, JSON.stringify(resultOf(run, changes)));
  switch (outcome.status) {
    case 'applied':
    case 'replayed':
      return fromRecorded(outcome.result);
    case 'rejected':
      return notKept(workspace, effectId, run, outcome.error);
  }
}

/**
 * The command ran but its file changes are not kept: that result is recorded under the effect id
 * (with no change), so a step retried after it replays it instead of running the command again.
 */
async function notKept(workspace: ShellWorkspace, effectId: string, run: ShellRun, reason: string): Promise<ToolResult> {
  const result = failure({ error: `the command ran (${describeEnd(run)}) but its file changes were not kept: ${reason}`, ...outputOf(run) });
  const recorded = await workspace.commit(effectId, { writes: [], deletes: [] }, result.content);
  return recorded.status === 'rejected' ? result : fromRecorded(recorded.result);
}

/** The result the model reads: small, with false flags and signal-less ends left out. */
function resultOf(run: ShellRun, changes: WorkspaceChanges): Record<string, unknown> {
  return {
    ok: run.exitCode === 0 && !run.timedOut,
    ...outputOf(run),
    files: {
      written: listed(changes.writes.map((write) => write.path)),
      deleted: listed(changes.deletes),
      skipped: listed(changes.skipped),
    },
    ...omitted(changes),
  };
}

function outputOf(run: ShellRun): Record<string, unknown> {
  return {
    exitCode: run.exitCode,
    ...(run.signal === null ? {} : { signal: run.signal }),
    ...(run.timedOut ? { timedOut: true } : {}),
    stdout: run.stdout,
    stderr: run.stderr,
    ...(run.stdoutTruncated ? { stdoutTruncated: true } : {}),
    ...(run.stderrTruncated ? { stderrTruncated: true } : {}),
  };
}

function listed<T>(items: readonly T[]): T[] {
  return items.slice(0, MAX_LISTED_FILES);
}

function omitted({ writes, deletes, skipped }: WorkspaceChanges): Record<string, unknown> {
  const count = [writes, deletes, skipped].reduce((sum, list) => sum + Math.max(0, list.length - MAX_LISTED_FILES), 0);
  return count === 0 ? {} : { filesNotListed: count };
}

function describeEnd(run: ShellRun): string {
  if (run.timedOut) {
    return 'it timed out and was killed';
  }
  return run.exitCode === null ? `killed by ${run.signal ?? 'a signal'}` : `exit code ${run.exitCode}`;
}

/** A committed result is an error for the model exactly when it says `ok: false` (non-zero exit or timeout). */
function fromRecorded(result: string): ToolResult {
  return { content: result, isError: !saysOk(result) };
}

function saysOk(result: string): boolean {
  try {
    const parsed: unknown = JSON.parse(result);
    return typeof parsed === 'object' && parsed !== null && (parsed as { ok?: unknown }).ok === true;
  } catch {
    return false;
  }
}

function failure(fields: { error: string } & Record<string, unknown>): ToolResult {
  return { content: JSON.stringify({ ok: false, ...fields }), isError: true };
}
