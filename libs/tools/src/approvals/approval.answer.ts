import { grantFolder, type Answer, type AnswerBody, type ApprovalPrompt, type ErrorIssue } from '@parley/contracts';
import { parseToolInput } from '../tool.catalogue';
import { argsDigest, canonicalJson } from './args.digest';
import { hostAllowed } from '../http/http-request.tool';
import { describeCall, grantKey, grantMember, isFileTool } from './call.scope';

/** What the agent allows, for checking an approver's edit. */
export interface ApprovalPolicy {
  allowedHosts?: readonly string[];
}

/**
 * Turns an approver's choice into the answer to record: the arguments that will run (an edit is
 * checked against the tool's schema), the grants a scoped choice writes, and the digest of the
 * arguments for the audit. Pushes an issue naming the field when the choice cannot be accepted.
 */
export function answerApproval(prompt: ApprovalPrompt, body: AnswerBody, issues: ErrorIssue[], policy: ApprovalPolicy = {}): Answer | undefined {
  const { decision } = body;
  if (decision === undefined) {
    issues.push({ field: 'decision', reason: 'required: allow_once, allow_stage, allow_run or deny' });
    return undefined;
  }
  if (decision === 'deny') {
    for (const field of ['input', 'directory'] as const) {
      if (body[field] !== undefined) {
        issues.push({ field, reason: 'only used when allowing the call' });
      }
    }
    if (issues.length > 0) {
      return undefined;
    }
    const reason = body.reason?.trim();
    return { kind: 'tool_approval', decision, ...(reason ? { reason } : {}), edited: false, grants: [], argsDigest: argsDigest(prompt.input) };
  }
  if (body.reason !== undefined) {
    issues.push({ field: 'reason', reason: 'only used with decision deny' });
    return undefined;
  }
  const input = finalInput(prompt, body, issues, policy);
  if (input === undefined) {
    return undefined;
  }
  const grants = decision === 'allow_once' ? noGrants(body, issues) : scopedGrants(prompt, input, body, decision, issues);
  if (grants === undefined) {
    return undefined;
  }
  // Compared in the form the tool's schema gives both, so defaults filled in are not an edit.
  const original = parseToolInput(prompt.tool, prompt.input);
  const edited = canonicalJson(input) !== canonicalJson(original.ok ? original.value : prompt.input);
  return { kind: 'tool_approval', decision, input, edited, grants, argsDigest: argsDigest(input) };
}

function finalInput(prompt: ApprovalPrompt, body: AnswerBody, issues: ErrorIssue[], policy: ApprovalPolicy): Record<string, unknown> | undefined {
  if (body.input === undefined) {
    return prompt.input;
  }
  const checked = parseToolInput(prompt.tool, body.input);
  if (!checked.ok) {
    // Each bad argument by its path under `input` (`input.cwd`), as any other field of the answer.
    issues.push(...checked.issues.map(({ field, reason }) => ({ field: field === '' ? 'input' : `input.${field}`, reason })));
    return undefined;
  }
  // An edit is held to the same rules as the model's call: a host off the agent's list would only fail when it ran.
  if (prompt.tool === 'http_request' && policy.allowedHosts && !hostAllowed(new URL(String(checked.value.url)), policy.allowedHosts)) {
    issues.push({ field: 'input.url', reason: `host ${new URL(String(checked.value.url)).host} is not on the agent's list (${policy.allowedHosts.join(', ')})` });
    return undefined;
  }
  return checked.value;
}

function noGrants(body: AnswerBody, issues: ErrorIssue[]): string[] | undefined {
  if (body.directory !== undefined) {
    issues.push({ field: 'directory', reason: 'only used with allow_stage or allow_run' });
    return undefined;
  }
  return [];
}

function scopedGrants(
  prompt: ApprovalPrompt,
  input: Record<string, unknown>,
  body: AnswerBody,
  decision: 'allow_stage' | 'allow_run',
  issues: ErrorIssue[],
): string[] | undefined {
  // The grant follows what will actually run: an edited call is read again.
  const { offer } = describeCall(prompt.tool, input);
  if (!offer.reusable) {
    issues.push({ field: 'decision', reason: `${offer.reason} Use allow_once.` });
    return undefined;
  }
  let keys = offer.keys;
  if (body.directory !== undefined) {
    const folder = grantFolder(body.directory);
    if (!isFileTool(prompt.tool) || !offer.directories?.includes(folder)) {
      const choices = offer.directories?.map((d) => JSON.stringify(d)).join(', ');
      issues.push({
        field: 'directory',
        reason: choices ? `must be a folder holding the file: one of ${choices}` : `${prompt.tool} grants are not kept per folder`,
      });
      return undefined;
    }
    keys = [grantKey.folder(prompt.tool, folder)];
  }
  return keys.map((key) => (decision === 'allow_run' ? grantMember.run(key) : grantMember.stage(prompt.stage, key)));
}
