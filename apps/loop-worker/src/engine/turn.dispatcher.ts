import { randomUUID } from 'node:crypto';
import {
  DEFAULT_STAGE,
  type AgentDefinition,
  type AutoApproval,
  type CheckpointRef,
  type InteractionRequest,
  type LogEntryOf,
  type Prompt,
  type ToolCall,
  type WaitReason,
} from '@parley/contracts';
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
  permissionOf,
  argsDigest,
  okResult,
  prepareHumanToolCall,
  skippedForQuestionResult,
  withApproverEdits,
  type ToolResult,
} from '@parley/tools';
import { childResultOf, type Conversation, type OpenCall } from './conversation';
import type { EngineResources } from './engine.resources';
import { toolsOffered, type Parking, type RunView, type SettleResult } from './run.view';
import { StageExit } from './stage.exit.handler';

type Question = LogEntryOf<'question'>;

/** Sub-agents may start sub-agents this many levels down, no more (an agent may delegate to itself). */
const MAX_DELEGATION_DEPTH = 3;

/**
 * Gives every call of the newest model turn its result, in order. A human tool in the turn takes
 * precedence: it alone is dispatched, every other call gets a "skipped" result, so each tool_use
 * stays paired. A call that needs approval parks the run; the calls after it wait for the answer.
 */
export class TurnDispatcher {
  private readonly stageExit: StageExit;

  constructor(private readonly resources: EngineResources) {
    this.stageExit = new StageExit(resources, {
      record: (lease, call, result) => this.record(lease, call, result),
      askAndPark: (lease, agent, asked, record) => this.askAndPark(lease, agent, asked, record),
      interrupted: (appended) => this.interrupted(appended),
    });
  }

  /** Log entries are stamped on Redis's clock: a question's deadline counts from its stamp. */
  private stamp(): string {
    return this.resources.store.ctx.clock.now().toISOString();
  }

  async settle(lease: Lease, view: RunView, calls: OpenCall[]): Promise<SettleResult> {
    const { agent } = view;
    const offered = new Set(toolsOffered(view));
    const human = calls.find(({ call }) => isHumanTool(call.name) && offered.has(call.name));
    const last = calls.find(({ call }) => isEnding(call.name) && offered.has(call.name));
    const rest = calls.filter((c) => c !== human && (human !== undefined || c !== last) && c.result === undefined);

    for (const open of rest) {
      const step = human ? await this.resultOrInterrupt(lease, open.call, skippedForQuestionResult()) : await this.dispatch(lease, view, open, offered);
      if (step.status !== 'settled') {
        return step;
      }
    }
    if (human && human.result === undefined) {
      return this.ask(lease, agent, view.conversation, human);
    }
    if (!human && last && last.result === undefined) {
      return this.leave(lease, view, last);
    }
    return { status: 'settled' };
  }

  /** finish, complete_stage or needs_input: the run or its stage would move on. */
  private async leave(lease: Lease, view: RunView, open: OpenCall): Promise<SettleResult> {
    const { call } = open;
    if (call.name === 'needs_input') {
      const checked = checkToolInput('needs_input', call.input);
      if (!checked.ok) {
        return this.resultOrInterrupt(lease, call, errorResult(checked.error));
      }
      const missing = String(checked.value.missing);
      const appended = await this.record(lease, call, okResult({ reported: true }));
      return appended.status === 'ok' ? { status: 'end', ending: { status: 'finished', reason: 'needs_input', summary: missing } } : this.interrupted(appended);
    }
    return this.stageExit.leave(lease, view, call);
  }

  /** One call with effects or reads: refused, run, held for a person's approval, or handed to a sub-agent. */
  private async dispatch(lease: Lease, view: RunView, open: OpenCall, offered: Set<string>): Promise<SettleResult> {
    const { agent, run, stage } = view;
    const { call } = open;
    if (!offered.has(call.name) || isHumanTool(call.name) || isEnding(call.name)) {
      return this.resultOrInterrupt(lease, call, errorResult(`unknown tool: ${call.name} is not available to this agent`));
    }
    if (call.name === 'delegate') {
      return this.delegate(lease, view, open);
    }
    if (open.question) {
      return open.answer ? this.runApproved(lease, agent, call, open.answer) : this.parkOn(lease, agent, open.question, 'approval');
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
    if (permissionOf(agent, call.name, stage) === 'allow') {
      return this.resultOrInterrupt(lease, call, await this.execute(lease, agent, call, input), undefined, true);
    }
    const stageName = stage?.name ?? DEFAULT_STAGE;
    const scope = describeCall(call.name, input);
    const granted = await this.resources.store.runs.grantedAmong(lease.tenant, lease.runId, membersToLookUp(scope.needs, stageName));
    const covered = coverWithoutAsking(scope, input, { stage: stageName, granted, safe: this.resources.agents.safeCommands(agent.name) });
    if (covered) {
      return this.resultOrInterrupt(lease, call, await this.execute(lease, agent, call, input), covered, true);
    }
    if (run.unattended) {
      // Nobody is there to approve: the agent's policy decides, and the audit says so.
      if (agent.unattended_approval === 'allow') {
        return this.resultOrInterrupt(lease, call, await this.execute(lease, agent, call, input), { basis: 'policy', covered: [], argsDigest: argsDigest(input) }, true);
      }
      return this.resultOrInterrupt(lease, call, errorResult('denied by policy: nobody is watching this run to approve this call; continue without it or call finish'), {
        basis: 'policy',
        covered: [],
        argsDigest: argsDigest(input),
        denied: true,
      });
    }
    return this.askApproval(lease, agent, call, approvalPrompt(call.name, input, scope, stageName));
  }

  /**
   * Starts a sub-agent (once: its run id comes from the call's effect id) and parks until it ends;
   * its end writes its result into this run's log and wakes it. Every pass makes sure a child still
   * queued has its job (a pass that died after creating it may not have enqueued it).
   */
  private async delegate(lease: Lease, view: RunView, open: OpenCall): Promise<SettleResult> {
    const { call } = open;
    if (open.childResult) {
      return this.resultOrInterrupt(lease, call, childResultOf(open.childResult), undefined, true);
    }
    if (open.child) {
      await this.ensureStarted(lease.tenant, open.child.childRunId);
      return { status: 'park', interactionId: open.child.childRunId, waitReason: 'child' };
    }
    const checked = checkToolInput('delegate', call.input);
    if (!checked.ok) {
      return this.resultOrInterrupt(lease, call, errorResult(checked.error));
    }
    const name = String(checked.value.agent);
    const child = this.resources.agents.find(name);
    if (!view.agent.delegates.includes(name) || !child) {
      const allowed = view.agent.delegates.join(', ') || 'none';
      return this.resultOrInterrupt(lease, call, errorResult(`unknown agent: ${name} is not one this agent may delegate to (${allowed})`));
    }
    if ((await this.depthOf(lease.tenant, view.run)) >= MAX_DELEGATION_DEPTH) {
      return this.resultOrInterrupt(lease, call, errorResult(`too deep: sub-agents may start sub-agents at most ${MAX_DELEGATION_DEPTH} levels down; do this part yourself`));
    }
    const childRunId = `${lease.runId.slice(0, 8)}-${call.effectId.replace(/^fx_/, '')}`;
    // A step that died after starting the child, before recording it: the child may have ended
    // since, its result already in this log (its wake was taken by the lease this step acquired).
    const ended = view.conversation.childResults.get(childRunId);
    if (ended) {
      return this.resultOrInterrupt(lease, call, childResultOf(ended), undefined, true);
    }
    await this.resources.store.runs.create({
      tenant: lease.tenant,
      runId: childRunId,
      owner: lease.owner,
      agent: child.name,
      task: String(checked.value.task),
      trigger: 'delegate',
      unattended: true,
      parentRunId: lease.runId,
      parentLeaseToken: lease.token,
      ...(child.stages[0] ? { stage: child.stages[0].name } : {}),
    });
    const at = this.stamp();
    const appended = await this.resources.logs.append(lease, { type: 'child', effectId: call.effectId, childRunId, agent: child.name, at }, [
      { type: 'child.started', data: { childRunId, agent: child.name } },
    ]);
    if (appended.status !== 'ok') {
      return this.interrupted(appended);
    }
    await this.ensureStarted(lease.tenant, childRunId);
    return { status: 'park', interactionId: childRunId, waitReason: 'child' };
  }

  private ensureStarted(tenant: string, runId: string): Promise<void> {
    return this.resources.control.ensureQueued(tenant, runId);
  }

  /** How many parents this run has. */
  private async depthOf(tenant: string, run: RunView['run']): Promise<number> {
    let depth = 0;
    for (let parent = run.parentRunId; parent !== undefined && depth < MAX_DELEGATION_DEPTH; depth++) {
      parent = (await this.resources.store.runs.get(tenant, parent))?.parentRunId;
    }
    return depth;
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
    return this.resultOrInterrupt(lease, call, verdict.edited ? withApproverEdits(result, verdict.input) : result, undefined, true);
  }

  private askApproval(lease: Lease, agent: AgentDefinition, call: ToolCall, prompt: Prompt): SettleResult {
    const question = this.question(call, prompt);
    return this.parkOn(lease, agent, question, 'approval', question);
  }

  private async ask(lease: Lease, agent: AgentDefinition, conversation: Conversation, open: OpenCall): Promise<SettleResult> {
    const { call } = open;
    if (open.question) {
      return this.parkOn(lease, agent, open.question, 'question');
    }
    const asked = this.newQuestion(lease, agent, conversation, call);
    return asked.status === 'park' ? asked : this.resultOrInterrupt(lease, call, asked.result);
  }

  /**
   * The park on the question a new human-tool call asks, or the result the call gets instead (the
   * question budget is spent, or the arguments are wrong).
   */
  private newQuestion(lease: Lease, agent: AgentDefinition, conversation: Conversation, call: ToolCall): Parking | { status: 'result'; result: ToolResult } {
    const max = agent.limits.max_ask_user_per_loop;
    if (conversation.questionsAsked >= max) {
      return { status: 'result', result: budgetExhaustedResult(max) };
    }
    const prepared = prepareHumanToolCall(call.name as Parameters<typeof prepareHumanToolCall>[0], call.input);
    if (!prepared.ok) {
      return { status: 'result', result: errorResult(prepared.error) };
    }
    const question = this.question(call, prepared.prompt);
    return this.parkOn(lease, agent, question, 'question', question);
  }

  /**
   * A model turn that is just one new question (one human-tool call the run is offered): the park on
   * it, to be made in one step with the turn's own append; null when the turn needs settling first.
   */
  questionOf(lease: Lease, view: RunView, calls: ToolCall[]): Parking | null {
    const [call] = calls;
    if (calls.length !== 1 || !isHumanTool(call.name) || !toolsOffered(view).includes(call.name)) {
      return null;
    }
    const asked = this.newQuestion(lease, view.agent, view.conversation, call);
    return asked.status === 'park' ? asked : null;
  }

  private question(call: ToolCall, prompt: Prompt): Question {
    return { type: 'question', toolUseId: call.toolUseId, effectId: call.effectId, interactionId: randomUUID(), prompt, at: this.stamp() };
  }

  private parkOn(lease: Lease, agent: AgentDefinition, question: Question, waitReason: WaitReason, record?: Question): Parking {
    return this.askAndPark(lease, agent, { interactionId: question.interactionId, waitReason, prompt: question.prompt, at: question.at }, record);
  }

  /**
   * Parks on a question, opening its interaction in the same step; `record`: the log entry that asks
   * it, appended in that step too (a new question), else it is in the log already. Every pass over
   * an unanswered question parks this way, and a repeat for an opened one opens nothing.
   */
  private askAndPark(
    lease: Lease,
    agent: AgentDefinition,
    asked: { interactionId: string; waitReason: WaitReason; prompt: Prompt; at: string; checkpoint?: CheckpointRef },
    record?: Question | LogEntryOf<'checkpoint'>,
  ): Parking {
    const open: InteractionRequest = {
      tenant: lease.tenant,
      runId: lease.runId,
      interactionId: asked.interactionId,
      owner: lease.owner,
      agent: agent.name,
      waitReason: asked.waitReason,
      prompt: asked.prompt,
      ...(asked.checkpoint ? { checkpoint: asked.checkpoint } : {}),
      timeoutSecs: agent.limits.interaction_timeout_secs,
      requestedAt: asked.at,
    };
    return { status: 'park', interactionId: asked.interactionId, waitReason: asked.waitReason, open, ...(record ? { record } : {}) };
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
        limits: {
          timeoutMs: timeout_secs * 1000,
          maxOutputBytes: max_output_bytes,
          maxFileBytes: limits.workspaceMaxFileBytes,
          maxWorkspaceBytes: limits.workspaceMaxBytes,
        },
      });
    }
    if (name === 'http_request') {
      const { allowed_hosts, timeout_secs, max_response_bytes } = agent.http;
      const policy = { allowedHosts: allowed_hosts, timeoutMs: timeout_secs * 1000, maxResponseBytes: max_response_bytes };
      return executeHttpRequest({ input, effectId, policy, records: workspace });
    }
    return errorResult(`unknown tool: ${name} is not available to this agent`);
  }

  /** `ran`: the call ran (or its sub-agent did), so its result is recorded even after a stop (which then ends the run). */
  private async resultOrInterrupt(lease: Lease, call: ToolCall, result: ToolResult, approval?: AutoApproval, ran = false): Promise<SettleResult> {
    const appended = await this.record(lease, call, result, approval, ran);
    return appended.status === 'ok' ? { status: 'settled' } : this.interrupted(appended);
  }

  record(lease: Lease, call: ToolCall, result: ToolResult, approval?: AutoApproval, ran = false): Promise<AppendResult> {
    const at = this.stamp();
    const { toolUseId, effectId, name } = call;
    return this.resources.logs.append(
      lease,
      { type: 'tool_result', toolUseId, effectId, name, content: result.content, isError: result.isError, ...(approval ? { approval } : {}), at },
      [{ type: 'tool.result', data: { toolUseId, effectId, name, isError: result.isError, content: result.content } }],
      '',
      ran,
    );
  }

  /** A stop or a takeover met before any question of this turn was published. */
  interrupted(appended: Exclude<AppendResult, { status: 'ok' }>): SettleResult {
    return appended.status === 'lost' ? { status: 'lost' } : { status: 'cancelled' };
  }
}

/** Calls that end the run or its stage: dispatched last, after every other call of the turn. */
function isEnding(tool: string): boolean {
  return tool === 'finish' || tool === 'complete_stage' || tool === 'needs_input';
}
