import { ParleyError } from '@parley/contracts';
import type { ToolSpec } from '@parley/models';
import { z } from 'zod';
import { HUMAN_TOOL_LIMITS } from './tool.limits';
import { ALL_TOOL_NAMES, isToolName, type ToolName } from './tool.names';
import {
  AskUserChoiceInputSchema,
  AskUserConfirmInputSchema,
  AskUserTextInputSchema,
  CompleteStageInputSchema,
  DelegateInputSchema,
  NeedsInputInputSchema,
  DeleteFileInputSchema,
  EditDocumentInputSchema,
  FinishInputSchema,
  ListFilesInputSchema,
  PresentForReviewInputSchema,
  ReadFileInputSchema,
  WriteFileInputSchema,
} from './tool.schemas';
import { checkInput, parseInput, type Checked, type InputIssue } from './tool.input';
import { ShellInputSchema } from './shell/shell.tool';
import { HttpRequestInputSchema } from './http/http-request.tool';

interface CatalogueEntry {
  description: string;
  schema: z.ZodType;
}

const WAITS =
  'Call it on its own: other tool calls in the same turn are put off until the answer. ' +
  'Ask only when you cannot do well without the person; questions per task are limited, and if the person ' +
  'does not answer in time you get no answer and carry on with what you have.';

const CATALOGUE: Record<ToolName, CatalogueEntry> = {
  list_files: {
    description: "List the files in this run's workspace with their sizes in bytes, the total used and the total allowed.",
    schema: ListFilesInputSchema,
  },
  read_file: {
    description: 'Read a text file from the workspace.',
    schema: ReadFileInputSchema,
  },
  write_file: {
    description:
      'Create a text file in the workspace, or replace it entirely. Folders need not exist first. ' +
      'A file over the per-file size limit, or a write that would take the workspace over its total limit, is refused.',
    schema: WriteFileInputSchema,
  },
  delete_file: {
    description: 'Delete a file from the workspace.',
    schema: DeleteFileInputSchema,
  },
  finish: {
    description:
      'End the task, with a summary for the person who started it. Call it when the task is done, or when it cannot be done ' +
      '(say why). You get no further turns after it.',
    schema: FinishInputSchema,
  },
  ask_user_text: {
    description: `Ask the person a question that needs a written answer, and wait for it. ${WAITS}`,
    schema: AskUserTextInputSchema,
  },
  ask_user_choice: {
    description:
      `Ask the person to pick among 2 to ${HUMAN_TOOL_LIMITS.maxOptions} options, and wait; you get back the label picked ` +
      `(or the list of labels when multi is true). Labels must be distinct. ${WAITS}`,
    schema: AskUserChoiceInputSchema,
  },
  ask_user_confirm: {
    description: `Ask the person a yes/no question, e.g. before an action they should agree to, and wait; you get back true or false. ${WAITS}`,
    schema: AskUserConfirmInputSchema,
  },
  edit_document: {
    description: `Give the person a text to edit, with instructions, and wait; you get back the text as they leave it. ${WAITS}`,
    schema: EditDocumentInputSchema,
  },
  shell: {
    description:
      "Run a shell command (/bin/sh -c) in a scratch folder holding a copy of this run's workspace files; files it creates, " +
      'changes or deletes there are written back to the workspace afterwards (text files within the size limits). ' +
      'You get the exit code, stdout and stderr (cut at a limit). It has a time limit, no network credentials and no secrets in its environment. ' +
      'A person may have to approve the command first.',
    schema: ShellInputSchema,
  },
  http_request: {
    description:
      'Send an HTTP GET or POST to a host on this agent\'s allow-list and get the status, content type and body (cut at a size limit). ' +
      'Redirects are not followed: you get the status and location. A person may have to approve the request first.',
    schema: HttpRequestInputSchema,
  },
  complete_stage: {
    description:
      'Finish the current stage of this task and move on, handing over its output. A person may review the output at a checkpoint ' +
      'first: you then get their decision (approved, or a revision to make) as the result.',
    schema: CompleteStageInputSchema,
  },
  delegate: {
    description:
      'Start a sub-agent on a self-contained task and wait for its result (its summary, its error, or what information it was missing). ' +
      'The sub-agent cannot ask the person anything; you can, if it reports missing information.',
    schema: DelegateInputSchema,
  },
  needs_input: {
    description:
      'End your task because information only a person can give is missing; say exactly what. You get no further turns after it. ' +
      'The agent that delegated to you decides whether to ask.',
    schema: NeedsInputInputSchema,
  },
  present_for_review: {
    description:
      'Show the person a piece of work (markdown) to review, and wait; you get back whether they approved it and their ' +
      `feedback, if any. ${WAITS}`,
    schema: PresentForReviewInputSchema,
  },
};

/** Raised when an agent names a tool Parley does not have. */
export class UnknownToolError extends ParleyError {
  constructor(readonly unknownNames: string[]) {
    super('bad_request', `unknown tool${unknownNames.length === 1 ? '' : 's'}: ${unknownNames.join(', ')} (known: ${ALL_TOOL_NAMES.join(', ')})`, {
      unknown: unknownNames,
    });
  }
}

const specCache = new Map<ToolName, ToolSpec>();

function specOf(name: ToolName): ToolSpec {
  let spec = specCache.get(name);
  if (spec === undefined) {
    const entry = CATALOGUE[name];
    // 'input' so that fields with a default (multi) are shown as optional, which they are to the model.
    const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(entry.schema, { io: 'input' });
    // Frozen, so every model call can be handed the same objects without a copy.
    spec = deepFreeze({ name, description: entry.description, input_schema: inputSchema });
    specCache.set(name, spec);
  }
  return spec;
}

/** The specs offered to the model, in the order named (repeats dropped). Throws UnknownToolError naming every unknown tool. */
export function toolSpecs(names: readonly string[]): ToolSpec[] {
  const unknown = names.filter((name) => !isToolName(name));
  if (unknown.length > 0) {
    throw new UnknownToolError([...new Set(unknown)]);
  }
  return [...new Set(names as readonly ToolName[])].map(specOf);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

/** Checks a call's arguments against the tool's schema; the error names each offending field. */
export function checkToolInput(name: string, input: unknown): Checked<Record<string, unknown>> {
  if (!isToolName(name)) {
    return { ok: false, error: `unknown tool: ${name}` };
  }
  return checkInput(name, CATALOGUE[name].schema, input) as Checked<Record<string, unknown>>;
}

/** A call's arguments parsed by the tool's schema, or each of their problems by field (a dotted path, '' for the whole input). */
export function parseToolInput(name: string, input: unknown): { ok: true; value: Record<string, unknown> } | { ok: false; issues: InputIssue[] } {
  if (!isToolName(name)) {
    return { ok: false, issues: [{ field: '', reason: `unknown tool: ${name}` }] };
  }
  return parseInput(CATALOGUE[name].schema, input) as { ok: true; value: Record<string, unknown> } | { ok: false; issues: InputIssue[] };
}

/** The model-facing description of a tool. */
export function toolDescription(name: ToolName): string {
  return CATALOGUE[name].description;
}
