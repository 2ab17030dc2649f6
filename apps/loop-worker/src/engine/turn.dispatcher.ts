import { randomUUID } from 'node:crypto';
import { DEFAULT_STAGE, type AgentDefinition, type AutoApproval, type InteractionRequest, type LogEntryOf, type Prompt, type ToolCall, type WaitReason } from '@parley/contracts';
import { RedisWorkspace, type AppendResult, type Lease } from '@parley/store';
import {
  approvalPrompt,
  approvalVerdict,
  budgetExhaustedResult,
  checkToolInput,
  coverWithoutAsking,
  describeCall,
  errorResult,
  executeHttpRequest,
  executeShellTool,
  executeWorkspaceTool,
  hostAllowed,
  isHumanTool,
  isWorkspaceTool,
  membersToLookUp,
  offeredTools,
  permissionOf,
  prepareFinish,
  prepareHumanToolCall,
  skippedForQuestionResult,
  withApproverEdits,
  type ToolResult,
} from '@parley/tools';
import type { Conversation, OpenCall } from './conversation';
import type { EngineResources } from './engine.resources';

export type SettleResult =
  | { status: 'settled' }
  | { status: 'park'; interactionId: string; waitReason: WaitReason }
  | { status: 'finish'; summary: string }
  | { status: 'lost' }
  | { status: 'cancelled' };

type Question = LogEntryOf<'question'>;

/**
 * Gives every call of the newest model turn its result, in order. A human tool in the turn takes
 * precedence: it alone is dispatched, every other call gets a "skipped" result, so each tool_use
 * stays paired. A call that needs approval parks the run; the calls after it wait for the answer.
 */
export class TurnDispatcher {
  constructor(private readonly resources: EngineResources) {}

  async settle(lease: Lease, agent: AgentDefinition, conversation: Conversation, calls: OpenCall[]): Promise<SettleResult> {
    const offered = new Set(offeredTools(agent));
    const human = calls.find(({ call }) => isHumanTool(call.name) && offered.has(call.name));
    const finish = calls.find(({ call }) => call.name === 'finish' && offered.has('finish'));
    const rest = calls.filter((c) => c !== human && (human !== undefined || c !== finish) && c.result === undefined);

    for (const open of rest) {
      const step = human
        ? await this.resultOrInterrupt(lease, open.call, skippedForQuestionResult())
        : await this.dispatch(lease, agent, open, offered);
      if (step.status !== 'settled') {
        return step;
      }
    }
    if (human && human.result === undefined) {
      return this.ask(lease, agent, conversation, human);
    }
    if (!human && finish && finish.result === undefined) {
      return this.finish(lease, finish.call);
    }
    return { status: 'settled' };
  }

  /** One call with effects or reads: refused, run, or held for a person's approval. */
  private async dispatch(lease: Lease, agent: AgentDefinition, open: OpenCall, offered: Set<string>): Promise<SettleResult> {
    const { call } = open;
    if (!offered.has(call.name) || isHumanTool(call.name) || call.name === 'finish') {
      return this.resultOrInterrupt(lease, call, errorResult(`unknown tool: ${call.name} is not available to this agent`));
    }
    if (open.question) {
      return open.answer ? this.runApproved(lease, agent, call, open.answer) : this.publishAndPark(lease, agent, open.question, 'approval');
    }
    const checked = checkToolInput(call.name, call.input);
    if (!checked.ok) {
      return this.resultOrInterrupt(lease, call, errorResult(checked.error));
    }
    // From here on the call is handled in the form its schema gives (defaults filled in), so what a
    // person approves, what runs and what the audit digests are the same arguments.
    const input = checked.value;
    const refusal = this.refusedBeforeAsking(agent, call.name, input);
    if (refusal) {
      return this.resultOrInterrupt(lease, call, refusal);
    }
    if (permissionOf(agent, call.name) === 'allow') {
      return this.resultOrInterrupt(lease, call, await this.execute(lease, agent, call, input));
    }
    const stage = DEFAULT_STAGE;
    const scope = describeCall(call.name, input);
    const granted = await this.resources.store.runs.grantedAmong(lease.tenant, lease.runId, membersToLookUp(scope.needs, stage));
    const covered = coverWithoutAsking(scope, input, { stage, granted, safe: this.resources.agents.safeCommands(agent.name) });
    if (covered) {
      return this.resultOrInterrupt(lease, call, await this.execute(lease, agent, call, input), covered);
    }
    return this.askApproval(lease, agent, call, approvalPrompt(call.name, input, scope, stage));
  }

  /** A request no approver could make succeed is refused at once rather than put to a person. */
  private refusedBeforeAsking(agent: AgentDefinition, tool: string, input: Record<string, unknown>): ToolResult | null {
    if (tool === 'http_request' && !hostAllowed(new URL(String(input.url)), agent.http.allowed_hosts)) {
      return errorResult(`host not allowed: ${new URL(String(input.url)).host} is not on this agent's list (${agent.http.allowed_hosts.join(', ')})`);
    }
    return null;
  }

  private async runApproved(lease: Lease, agent: AgentDefinition, call: ToolCall, answer: LogEntryOf<'answer'>): Promise<SettleResult> {
    const verdict = approvalVerdict(answer.outcome, answer.answer);
    if (!verdict.allowed) {
      return this.resultOrInterrupt(lease, call, verdict.result);
    }
    const result = await this.execute(lease, agent, call, verdict.input);
    return this.resultOrInterrupt(lease, call, verdict.edited ? withApproverEdits(result, verdict.input) : result);
  }

  private async askApproval(lease: Lease, agent: AgentDefinition, call: ToolCall, prompt: Prompt): Promise<SettleResult> {
    const question = this.question(call, prompt);
    const appended = await this.resources.store.runs.append(lease, question);
    return appended.status === 'ok' ? this.publishAndPark(lease, agent, question, 'approval') : this.interrupted(appended);
  }

  private async ask(lease: Lease, agent: AgentDefinition, conversation: Conversation, open: OpenCall): Promise<SettleResult> {
    const { call } = open;
    let question = open.question;
    if (!question) {
      const max = agent.limits.max_ask_user_per_loop;
      if (conversation.questionsAsked >= max) {
        return this.resultOrInterrupt(lease, call, budgetExhaustedResult(max));
      }
      const prepared = prepareHumanToolCall(call.name as Parameters<typeof prepareHumanToolCall>[0], call.input);
      if (!prepared.ok) {
        return this.resultOrInterrupt(lease, call, errorResult(prepared.error));
      }
      question = this.question(call, prepared.prompt);
      const appended = await this.resources.store.runs.append(lease, question);
      if (appended.status !== 'ok') {
        return this.interrupted(appended);
      }
    }
    return this.publishAndPark(lease, agent, question, 'question');
  }

  private question(call: ToolCall, prompt: Prompt): Question {
    return { type: 'question', toolUseId: call.toolUseId, effectId: call.effectId, interactionId: randomUUID(), prompt, at: new Date().toISOString() };
  }

  /**
   * Published on every pass: a worker that died between the log append and the publish left the
   * question unpublished, and the job id makes a repeat a no-op.
   */
  private async publishAndPark(lease: Lease, agent: AgentDefinition, question: Question, waitReason: WaitReason): Promise<SettleResult> {
    const request: InteractionRequest = {
      tenant: lease.tenant,
      runId: lease.runId,
      interactionId: question.interactionId,
      owner: lease.owner,
      agent: agent.name,
      waitReason,
      prompt: question.prompt,
      timeoutSecs: agent.limits.interaction_timeout_secs,
      requestedAt: question.at,
    };
    await this.resources.queues.publishInteractionRequest(request);
    return { status: 'park', interactionId: question.interactionId, waitReason };
  }

  private async finish(lease: Lease, call: ToolCall): Promise<SettleResult> {
    const prepared = prepareFinish(call.input);
    if (!prepared.ok) {
      return this.resultOrInterrupt(lease, call, errorResult(prepared.error));
    }
    const appended = await this.record(lease, call, { content: JSON.stringify({ ok: true }), isError: false });
    return appended.status === 'ok' ? { status: 'finish', summary: prepared.summary } : this.interrupted(appended);
  }

  private async execute(lease: Lease, agent: AgentDefinition, call: ToolCall, input: Record<string, unknown>): Promise<ToolResult> {
    const { limits } = this.resources;
    const workspace = new RedisWorkspace(this.resources.store.ctx, lease, limits.workspaceMaxBytes);
    const { name, effectId } = call;
    if (isWorkspaceTool(name)) {
      return executeWorkspaceTool({
        name,
        input,
        effectId,
        workspace,
        limits: { maxFileBytes: limits.workspaceMaxFileBytes, maxWorkspaceBytes: limits.workspaceMaxBytes },
      });
    }
    if (name === 'shell') {
      const { timeout_secs, max_output_bytes } = agent.shell;
      return executeShellTool({
        input,
        effectId,
        workspace,
        limits: { timeoutMs: timeout_secs * 1000, maxOutputBytes: max_output_bytes, maxFileBytes: limits.workspaceMaxFileBytes },
      });
    }
    if (name === 'http_request') {
      const { allowed_hosts, timeout_secs, max_response_bytes } = agent.http;
      return executeHttpRequest({ input, effectId, policy: { allowedHosts: allowed_hosts, timeoutMs: timeout_secs * 1000, maxResponseBytes: max_response_bytes } });
    }
    return errorResult(`unknown tool: ${name} is not available to this agent`);
  }

  private async resultOrInterrupt(lease: Lease, call: ToolCall, result: ToolResult, approval?: AutoApproval): Promise<SettleResult> {
    const appended = await this.record(lease, call, result, approval);
    return appended.status === 'ok' ? { status: 'settled' } : this.interrupted(appended);
  }

  private record(lease: Lease, call: ToolCall, result: ToolResult, approval?: AutoApproval): Promise<AppendResult> {
    const at = new Date().toISOString();
    const { toolUseId, effectId, name } = call;
    return this.resources.store.runs.append(
      lease,
      { type: 'tool_result', toolUseId, effectId, name, content: result.content, isError: result.isError, ...(approval ? { approval } : {}), at },
      [{ type: 'tool.result', data: { toolUseId, effectId, name, isError: result.isError, content: result.content } }],
    );
  }

  /** A stop or a takeover met before any question of this turn was published. */
  private interrupted(appended: Exclude<AppendResult, { status: 'ok' }>): SettleResult {
    return appended.status === 'lost' ? { status: 'lost' } : { status: 'cancelled' };
  }
}
