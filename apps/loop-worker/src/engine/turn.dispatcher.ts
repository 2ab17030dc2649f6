import { randomUUID } from 'node:crypto';
import type { AgentDefinition, InteractionRequest, ToolCall } from '@parley/contracts';
import { RedisWorkspace, type AppendResult, type Lease } from '@parley/store';
import {
  budgetExhaustedResult,
  errorResult,
  executeWorkspaceTool,
  isHumanTool,
  isWorkspaceTool,
  prepareFinish,
  prepareHumanToolCall,
  skippedForQuestionResult,
  type ToolResult,
} from '@parley/tools';
import type { Conversation, OpenCall } from './conversation';
import type { EngineResources } from './engine.resources';

export type SettleResult =
  | { status: 'settled' }
  | { status: 'park'; interactionId: string }
  | { status: 'finish'; summary: string }
  | { status: 'lost' }
  | { status: 'cancelled'; openInteractionId: string | null };

/**
 * Gives every call of the newest model turn its result. A human tool in the turn takes precedence:
 * it alone is dispatched, every other call gets a "skipped" result, so each tool_use stays paired.
 */
export class TurnDispatcher {
  constructor(private readonly resources: EngineResources) {}

  async settle(lease: Lease, agent: AgentDefinition, conversation: Conversation, calls: OpenCall[]): Promise<SettleResult> {
    const offered = new Set(agent.tools);
    const human = calls.find(({ call }) => isHumanTool(call.name) && offered.has(call.name));
    const finish = calls.find(({ call }) => call.name === 'finish' && offered.has('finish'));
    const rest = calls.filter((c) => c !== human && (human !== undefined || c !== finish) && c.result === undefined);

    for (const { call } of rest) {
      const result = human ? skippedForQuestionResult() : await this.execute(lease, call, offered);
      const appended = await this.record(lease, call, result);
      if (appended.status !== 'ok') {
        return this.interrupted(appended);
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
      question = {
        type: 'question',
        toolUseId: call.toolUseId,
        effectId: call.effectId,
        interactionId: randomUUID(),
        prompt: prepared.prompt,
        at: new Date().toISOString(),
      };
      const appended = await this.resources.store.runs.append(lease, question);
      if (appended.status !== 'ok') {
        return this.interrupted(appended);
      }
    }
    // Published on every pass: a worker that died between the log append and the publish left the
    // question unpublished, and the job id makes a repeat a no-op.
    const request: InteractionRequest = {
      tenant: lease.tenant,
      runId: lease.runId,
      interactionId: question.interactionId,
      owner: lease.owner,
      waitReason: 'question',
      prompt: question.prompt,
      timeoutSecs: agent.limits.interaction_timeout_secs,
      requestedAt: question.at,
    };
    await this.resources.queues.publishInteractionRequest(request);
    return { status: 'park', interactionId: question.interactionId };
  }

  private async finish(lease: Lease, call: ToolCall): Promise<SettleResult> {
    const prepared = prepareFinish(call.input);
    if (!prepared.ok) {
      return this.resultOrInterrupt(lease, call, errorResult(prepared.error));
    }
    const appended = await this.record(lease, call, { content: JSON.stringify({ ok: true }), isError: false });
    return appended.status === 'ok' ? { status: 'finish', summary: prepared.summary } : this.interrupted(appended);
  }

  private async execute(lease: Lease, call: ToolCall, offered: Set<string>): Promise<ToolResult> {
    if (!offered.has(call.name) || !isWorkspaceTool(call.name)) {
      return errorResult(`unknown tool: ${call.name} is not available to this agent`);
    }
    const workspace = new RedisWorkspace(this.resources.store.ctx, lease, this.resources.limits.workspaceMaxBytes);
    return executeWorkspaceTool({
      name: call.name,
      input: call.input,
      effectId: call.effectId,
      workspace,
      limits: { maxFileBytes: this.resources.limits.workspaceMaxFileBytes, maxWorkspaceBytes: this.resources.limits.workspaceMaxBytes },
    });
  }

  private async resultOrInterrupt(lease: Lease, call: ToolCall, result: ToolResult): Promise<SettleResult> {
    const appended = await this.record(lease, call, result);
    return appended.status === 'ok' ? { status: 'settled' } : this.interrupted(appended);
  }

  private record(lease: Lease, call: ToolCall, result: ToolResult): Promise<AppendResult> {
    const at = new Date().toISOString();
    return this.resources.store.runs.append(
      lease,
      { type: 'tool_result', toolUseId: call.toolUseId, effectId: call.effectId, name: call.name, content: result.content, isError: result.isError, at },
      [{ type: 'tool.result', data: { toolUseId: call.toolUseId, effectId: call.effectId, name: call.name, isError: result.isError, content: result.content } }],
    );
  }

  /** A stop or a takeover met before any question of this turn was published. */
  private interrupted(appended: Exclude<AppendResult, { status: 'ok' }>): SettleResult {
    return appended.status === 'lost' ? { status: 'lost' } : { status: 'cancelled', openInteractionId: null };
  }
}
