import { z } from 'zod';
import { HUMAN_TOOL_LIMITS } from './tool.limits';
import { normaliseWorkspacePath } from './workspace.path';

// Every input object is strict: an unknown field is refused with its name rather than dropped, since a
// call stripped of a field the model meant (a POST's `data`, a shell `cwd`) would be approved and run
// as something else. Their JSON Schemas carry `additionalProperties: false` to say so to the model.

const isAbsent = (input: unknown): boolean => input === undefined || input === null;

/** A required string whose errors read well after the field name: "question: is required". */
function text(description: string, options: { allowEmpty?: boolean } = {}) {
  const base = z.string({ error: (issue) => (isAbsent(issue.input) ? 'is required' : 'must be a string') });
  // Blank is empty too: the Anthropic API refuses a text block of only whitespace, and a person would get a blank question.
  return (options.allowEmpty === true ? base : base.min(1, 'must not be empty').refine((value) => value === '' || value.trim() !== '', 'must not be empty')).describe(description);
}

const limit = (bytes: number): string => `at most ${bytes} bytes; longer text is cut`;

/** A workspace path, checked where the arguments are checked: a call that could never succeed is never put to a person. */
function workspacePath(description: string) {
  return text(description).superRefine((value, ctx) => {
    const path = normaliseWorkspacePath(value);
    if (!path.ok && value !== '') {
      ctx.addIssue({ code: 'custom', message: path.error });
    }
  });
}

export const ListFilesInputSchema = z.strictObject({});

export const ReadFileInputSchema = z.strictObject({
  path: workspacePath('Relative path with / between folders, e.g. notes/plan.md'),
});

export const WriteFileInputSchema = z.strictObject({
  path: workspacePath('Relative path with / between folders, e.g. notes/plan.md'),
  content: text('The whole new content of the file', { allowEmpty: true }),
});

export const DeleteFileInputSchema = z.strictObject({
  path: workspacePath('Relative path of the file to delete'),
});

export const FinishInputSchema = z.strictObject({
  summary: text('What you did and what the outcome is, for the person who started the task'),
});

export const AskUserTextInputSchema = z.strictObject({
  question: text(`One clear, self-contained question (${limit(HUMAN_TOOL_LIMITS.questionBytes)})`),
});

export const ChoiceOptionInputSchema = z.strictObject({
  label: text(`Short text the person picks; distinct from the other labels (${limit(HUMAN_TOOL_LIMITS.optionLabelBytes)})`),
  description: z
    .string({ error: 'must be a string' })
    .optional()
    .describe(`Optional detail shown under the label (${limit(HUMAN_TOOL_LIMITS.optionDescriptionBytes)})`),
});

export const AskUserChoiceInputSchema = z.strictObject({
  question: text(`The question the options answer (${limit(HUMAN_TOOL_LIMITS.questionBytes)})`),
  options: z
    .array(ChoiceOptionInputSchema, { error: (issue) => (isAbsent(issue.input) ? 'is required' : 'must be an array of {label, description?}') })
    .min(2, 'needs at least 2 options')
    .max(HUMAN_TOOL_LIMITS.maxOptions, `at most ${HUMAN_TOOL_LIMITS.maxOptions} options`)
    .describe(`2 to ${HUMAN_TOOL_LIMITS.maxOptions} options, in the order to show them`),
  multi: z
    .boolean({ error: 'must be true or false' })
    .default(false)
    .describe('true to let the person pick several options; false (the default) for exactly one'),
});

export const AskUserConfirmInputSchema = z.strictObject({
  question: text(`A yes/no question (${limit(HUMAN_TOOL_LIMITS.questionBytes)})`),
});

export const EditDocumentInputSchema = z.strictObject({
  instructions: text(`What the person should do with the text (${limit(HUMAN_TOOL_LIMITS.questionBytes)})`),
  content: text(`The text the person edits (${limit(HUMAN_TOOL_LIMITS.documentBytes)})`, { allowEmpty: true }),
});

export const PresentForReviewInputSchema = z.strictObject({
  title: text(`Short title of what is reviewed (${limit(HUMAN_TOOL_LIMITS.titleBytes)})`),
  markdown: text(`The work to review, as markdown (${limit(HUMAN_TOOL_LIMITS.documentBytes)})`),
});

export const CompleteStageInputSchema = z.strictObject({
  output: text(`What this stage produced, in full: the document or result the next stage (and any checkpoint) works from (${limit(HUMAN_TOOL_LIMITS.documentBytes)})`, {
    allowEmpty: true,
  }),
  next: z
    .string({ error: 'must be a string' })
    .optional()
    .describe('The stage to move to, when this stage has more than one way on'),
});

export const DelegateInputSchema = z.strictObject({
  agent: text('The name of the agent to start as a sub-agent (one of those this agent may delegate to)'),
  task: text('The task for the sub-agent, self-contained: it cannot ask the person anything'),
});

export const NeedsInputInputSchema = z.strictObject({
  missing: text('What information is missing and why you cannot go on without it; your parent decides whether to ask a person'),
});
