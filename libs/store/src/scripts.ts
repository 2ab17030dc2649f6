import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_TIMED_OUT, ReplyLostError, type RedisClient } from '@parley/platform';

type Arg = string | number;
type ScriptFn = (...args: Arg[]) => Promise<unknown>;

/**
 * `repeatable`: a repeat changes nothing that matters (a read, a lease or a socket slot taken again by the same
 * holder, a rate counted once more), so a call whose reply a dropped connection lost is sent again
 * rather than failed (ReplyLostError). The others change a run or an interaction and emit events.
 */
const SCRIPTS = {
  createRun: { file: 'create-run.lua', keys: 9 },
  startKeyDone: { file: 'start-key-done.lua', keys: 1, repeatable: true },
  postMessage: { file: 'post-message.lua', keys: 6 },
  takeMessages: { file: 'take-messages.lua', keys: 6 },
  acquireLease: { file: 'acquire-lease.lua', keys: 7 },
  renewLease: { file: 'renew-lease.lua', keys: 1, repeatable: true },
  releaseLease: { file: 'release-lease.lua', keys: 4 },
  appendLog: { file: 'append-log.lua', keys: 5 },
  park: { file: 'park.lua', keys: 9 },
  endRun: { file: 'end-run.lua', keys: -1 },
  cancelRun: { file: 'cancel-run.lua', keys: -1 },
  resolveInteraction: { file: 'resolve-interaction.lua', keys: 10 },
  claimInteraction: { file: 'claim-interaction.lua', keys: 4 },
  readRunEvents: { file: 'read-run-events.lua', keys: 4, repeatable: true },
  rearmDeadlineTimer: { file: 'rearm-deadline-timer.lua', keys: 2 },
  expireDue: { file: 'expire-due.lua', keys: 5 },
  workspaceEffect: { file: 'workspace-effect.lua', keys: 3 },
  workspaceCommit: { file: 'workspace-commit.lua', keys: 3 },
  rateHit: { file: 'rate-hit.lua', keys: -1, repeatable: true },
  rateRefund: { file: 'rate-refund.lua', keys: -1 },
  admitRun: { file: 'admit-run.lua', keys: 5, repeatable: true },
  pruneInflight: { file: 'prune-inflight.lua', keys: 1, repeatable: true },
  indexAfter: { file: 'index-after.lua', keys: 1, repeatable: true },
  acquireSocket: { file: 'acquire-socket.lua', keys: 1, repeatable: true },
  agentSave: { file: 'agent-save.lua', keys: 3 },
  agentDelete: { file: 'agent-delete.lua', keys: 2 },
  agentPrune: { file: 'agent-prune.lua', keys: 2 },
  agentEnable: { file: 'agent-enable.lua', keys: 2 },
  agentRevoke: { file: 'agent-revoke.lua', keys: 1 },
  webhookCreate: { file: 'webhook-create.lua', keys: 3 },
  webhookSwap: { file: 'webhook-swap.lua', keys: 2 },
  webhookDelete: { file: 'webhook-delete.lua', keys: 5 },
  webhookCreateDelivery: { file: 'webhook-delivery-create.lua', keys: 3 },
  webhookRecordAttempt: { file: 'webhook-delivery-attempt.lua', keys: 2 },
  webhookSlotTake: { file: 'webhook-slot-take.lua', keys: 4 },
  webhookSlotGive: { file: 'webhook-slot-give.lua', keys: 3 },
} as const;

export type ScriptName = keyof typeof SCRIPTS;

const DIR = join(__dirname, 'scripts');

/** Runs the wrapped body of a script with the emit prologue, publishes its events, then returns its result or raises its error. */
const WRAPPED_END = `local ok, result = pcall(body)
publishEvents()
if not ok then
  -- The error as Redis reports it (a raise of the caught text would gain another "ERR ").
  return type(result) == 'table' and result or {err = tostring(result)}
end
return result
`;

/** Helpers a script gets when it calls them (the emit prologue calls them all), each named by one of its functions. */
const HELPERS = [
  { file: 'clock.lua', call: 'redisClockMs(' },
  { file: 'seqs.lua', call: 'firstPackedAbove(' },
  { file: 'agent-versions.lua', call: 'leaveAgentVersion(' },
] as const;

// Read together with the scripts, not at import: a script and the includes it calls come from the same files.
function source(file: string, helpers: ReadonlyArray<{ lua: string; call: string }>, prologue: string): string {
  const body = readFileSync(join(DIR, file), 'utf8');
  // Scripts that change state and emit events share the prologue (see includes/emit.lua), and
  // publish their events in one message once the body has returned, from wherever it returns, or
  // raised (Redis keeps what a failed script wrote before its error: its events are in the stream).
  if (body.includes('emit prologue')) {
    return [...helpers.map(({ lua }) => lua), prologue, `local function body()\n${body}\nend\n${WRAPPED_END}`].join('\n');
  }
  return [...helpers.filter(({ call }) => body.includes(call)).map(({ lua }) => lua), body].join('\n');
}

/**
 * The atomic steps over Parley's keys, registered on a client as EVALSHA commands. Scripts with a
 * variable number of keys take it as their first argument.
 */
export class Scripts {
  private readonly commands: Record<ScriptName, ScriptFn>;

  constructor(redis: RedisClient) {
    const commands: Partial<Record<ScriptName, ScriptFn>> = {};
    const helpers = HELPERS.map(({ file, call }) => ({ lua: readFileSync(join(DIR, 'includes', file), 'utf8'), call }));
    const prologue = readFileSync(join(DIR, 'includes', 'emit.lua'), 'utf8');
    for (const [name, { file, keys }] of Object.entries(SCRIPTS) as Array<[ScriptName, { file: string; keys: number }]>) {
      const command = `parley_${name}`;
      if (!(command in redis)) {
        redis.defineCommand(command, { lua: source(file, helpers, prologue), ...(keys >= 0 ? { numberOfKeys: keys } : {}) });
      }
      const fn = (redis as unknown as Record<string, ScriptFn>)[command];
      commands[name] = (...args: Arg[]) => fn.apply(redis, args);
    }
    this.commands = commands as Record<ScriptName, ScriptFn>;
  }

  async run(name: ScriptName, keys: string[], args: Arg[]): Promise<unknown> {
    const script: { keys: number; repeatable?: true } = SCRIPTS[name];
    const call = (): Promise<unknown> => this.commands[name](...(script.keys < 0 ? [keys.length] : []), ...keys, ...args);
    try {
      return await call();
    } catch (error) {
      // Unanswered past the connection's timeout, it may still run: callers handle it as a lost reply.
      const lost = (error as Error | null)?.message === COMMAND_TIMED_OUT ? new ReplyLostError(name, 'unanswered past the command timeout') : error;
      if (lost instanceof ReplyLostError && script.repeatable) {
        return call();
      }
      throw lost;
    }
  }
}
