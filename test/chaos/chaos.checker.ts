import type { LogEntry, ParleyEvent } from '@parley/contracts';
import type { Harness } from '../harness/harness';
import type { EventClient } from '../harness/event.client';
import { CHAOS_OPTIONS, CODENAME, JOURNAL, choiceFor, textAnswerFor } from './chaos.agent';
import type { SentAnswer } from './chaos.answerer';

const TERMINAL = new Set(['finished', 'failed', 'cancelled']);

export interface RedisLoss {
  /** The tenant's last seq the clients had seen when Redis was killed, and the seq after its restart. */
  seqBefore: number;
  seqAfter: number;
}

export interface CheckInput {
  h: Harness;
  clients: EventClient[];
  sent: Map<string, SentAnswer>;
  /** The ids the starts were answered with (each start retried with its idempotency key until it was). */
  started: string[];
  loss?: RedisLoss;
  /** The AOF can lose writes (everysec): what it lost is reported, not failed. */
  lossAllowed: boolean;
}

export interface CheckResult {
  figures: Record<string, number | string>;
  violations: string[];
  /** What the AOF window lost, as observed. */
  lost: string[];
}

type Ix = { id: string; status: string; answer?: string; resolvedBy?: string; kind: string };

/** Reads every run of the pass back from Redis and checks the invariants of issue 6. */
export async function checkPass(input: CheckInput): Promise<CheckResult> {
  const { h } = input;
  const violations: string[] = [];
  const lost: string[] = [];
  const flag = (message: string) => {
    if (violations.length < 200) {
      violations.push(message);
    }
  };
  /** What the AOF window may lose is reported in a pass that allows it, and a violation otherwise. */
  const lossOr = (allowed: boolean, message: string) => (allowed ? lost.push(message) : flag(message));
  const touched = touchedByLoss(input.clients, input.loss);
  const runIds = await h.redis.zrange(h.keys.runIndex(h.tenant), '0', '-1');
  // Each run was started once: a start retried after its response was lost finds the run it made.
  const started = new Set(input.started);
  const unasked = runIds.filter((runId) => !started.has(runId));
  if (unasked.length > 0) {
    flag(`${unasked.length} runs no start was answered with (a retried start made a second run): ${unasked.slice(0, 10).join(', ')}`);
  }
  const missing = input.started.filter((runId) => !runIds.includes(runId));
  if (missing.length > 0) {
    lossOr(input.lossAllowed, `${missing.length} started runs are not in Redis: ${missing.slice(0, 10).join(', ')}`);
  }
  const status: Record<string, number> = {};
  const stuck: string[] = [];
  let interactions = 0;
  let resolvedOnce = 0;
  let answersDelivered = 0;
  let writesApplied = 0;
  let expired = 0;
  let answered = 0;
  for (const runId of runIds) {
    const run = await h.runHash(runId);
    status[run.status ?? 'missing'] = (status[run.status ?? 'missing'] ?? 0) + 1;
    if (!TERMINAL.has(run.status)) {
      stuck.push(`${runId} (${run.status}${run.pendingInteractionId ? ` on ${run.pendingInteractionId}` : ''}, wake ${run.wake})`);
      continue;
    }
    const log = await h.runLog(runId);
    const ws = await h.redis.hgetall(h.keys.workspace(h.tenant, runId));
    const fx = await h.redis.hgetall(h.keys.effects(h.tenant, runId));
    const questions = log.filter((e): e is Extract<LogEntry, { type: 'question' }> => e.type === 'question');
    const answers = log.filter((e): e is Extract<LogEntry, { type: 'answer' }> => e.type === 'answer');
    const results = log.filter((e): e is Extract<LogEntry, { type: 'tool_result' }> => e.type === 'tool_result');
    const assistants = log.filter((e) => e.type === 'assistant');
    const where = `run ${runId}`;
    // A run that wrote in the lost second may go on from a worker's view built on the lost writes
    // (its lease token survived the rollback): that is the loss window, reported, not hidden.
    const runFlag = (message: string) => lossOr(input.lossAllowed && touched.has(runId), `${message}${touched.has(runId) ? ' [wrote in the lost second]' : ''}`);

    if (run.status === 'finished' && assistants.length !== 5) {
      runFlag(`${where}: ${assistants.length} model turns in the log, the script has 5: ${shape(log)}`);
    }
    // Each interaction resolved exactly once, and its answer in the log (what the model sees) once.
    const ixes = new Map<string, Ix>();
    for (const q of questions) {
      interactions += 1;
      const hash = await h.redis.hgetall(h.keys.interaction(h.tenant, q.interactionId));
      const ix: Ix = { id: q.interactionId, status: hash.status ?? 'missing', kind: q.prompt.kind, ...(hash.answer ? { answer: hash.answer } : {}), ...(hash.resolvedBy ? { resolvedBy: hash.resolvedBy } : {}) };
      ixes.set(q.interactionId, ix);
      const mine = answers.filter((a) => a.interactionId === q.interactionId);
      if (mine.length !== 1) {
        runFlag(`${where}: interaction ${q.interactionId} has ${mine.length} answer entries in the log`);
        continue;
      }
      answersDelivered += 1;
      if (ix.status === 'open' || ix.status === 'missing') {
        runFlag(`${where}: interaction ${q.interactionId} is ${ix.status} but its answer is in the log`);
        continue;
      }
      if (mine[0].outcome !== ix.status) {
        runFlag(`${where}: interaction ${q.interactionId} is ${ix.status} but the log says ${mine[0].outcome}`);
        continue;
      }
      resolvedOnce += 1;
      if (ix.status === 'expired') {
        expired += 1;
      } else {
        answered += 1;
      }
    }
    for (const a of answers) {
      if (!ixes.has(a.interactionId)) {
        runFlag(`${where}: answer entry for ${a.interactionId}, which the log never asked`);
      }
    }
    // Every tool call got exactly one result, and each effect id appears once.
    const effectIds = results.map((r) => r.effectId);
    if (new Set(effectIds).size !== effectIds.length) {
      runFlag(`${where}: a tool_result effect id appears twice in the log`);
    }
    for (const id of Object.keys(fx)) {
      if (!effectIds.includes(id)) {
        runFlag(`${where}: effect ${id} was applied but its result is not in the log`);
      }
    }
    writesApplied += Object.keys(fx).length;

    if (run.status !== 'finished') {
      continue;
    }
    // The workspace holds exactly what the answers the model saw imply, each write applied once.
    const [text, approval, choice] = questions;
    const textIx = text && ixes.get(text.interactionId);
    const approvalIx = approval && ixes.get(approval.interactionId);
    const choiceIx = choice && ixes.get(choice.interactionId);
    if (!textIx || !approvalIx || !choiceIx) {
      runFlag(`${where}: finished with ${questions.length} questions in the log, expected 3`);
      continue;
    }
    if (approvalIx.status === 'answered') {
      const expected = textIx.status === 'answered' ? textAnswerFor(textIx.id) : undefined;
      if (ws[CODENAME] === undefined || (expected !== undefined && ws[CODENAME] !== expected)) {
        runFlag(`${where}: ${CODENAME} is ${JSON.stringify(ws[CODENAME])}, expected ${JSON.stringify(expected ?? '(the no-answer result)')}`);
      }
    } else if (ws[CODENAME] !== undefined) {
      runFlag(`${where}: the write was not approved but ${CODENAME} exists`);
    }
    const lines = (ws[JOURNAL] ?? '').split('\n').filter((line) => line !== '');
    if (lines.length !== 1) {
      runFlag(`${where}: ${JOURNAL} has ${lines.length} lines (the shell append ran ${lines.length} times)`);
    } else if (choiceIx.status === 'answered' && lines[0] !== `colour=${CHAOS_OPTIONS[choiceFor(choiceIx.id)]}`) {
      runFlag(`${where}: ${JOURNAL} says ${JSON.stringify(lines[0])}, the answer was ${CHAOS_OPTIONS[choiceFor(choiceIx.id)]}`);
    }
  }

  // Acknowledged answers: durable unless the AOF window lost them.
  let ackedLost = 0;
  for (const sent of input.sent.values()) {
    if (sent.outcome !== 'accepted') {
      continue;
    }
    const hash = await h.redis.hgetall(h.keys.interaction(h.tenant, sent.interactionId));
    if (hash.status !== 'answered' || !(hash.resolvedBy ?? '').includes('"user"')) {
      ackedLost += 1;
      const message = `answer to ${sent.interactionId} was acknowledged, but the interaction is ${hash.status ?? 'gone'} (${hash.resolvedBy ?? 'no resolver'})`;
      lossOr(input.lossAllowed, message);
    }
  }

  const stream = await h.tenantEvents();
  const streams = clientStreams(input.clients, stream, flag);
  // Seqs issued after a restart are above those the lost writes had used (the seq floor): never reused.
  const unseen = unseenReissued(input.clients, stream, input.loss);
  if (unseen > 0) {
    flag(`${unseen} events the clients never got: issued after the restart with seqs the lost writes had used, which the clients had already seen`);
  }
  const resolvedEvents = resolvedPerInteraction(stream);
  for (const [id, count] of resolvedEvents) {
    if (count !== 1) {
      flag(`interaction ${id}: ${count} interaction.resolved events in the tenant stream`);
    }
  }
  if (stuck.length > 0) {
    flag(`${stuck.length} runs stuck: ${stuck.slice(0, 10).join('; ')}`);
  }
  const outcomes = [...input.sent.values()].reduce<Record<string, number>>((acc, s) => ({ ...acc, [s.outcome ?? 'none']: (acc[s.outcome ?? 'none'] ?? 0) + 1 }), {});
  return {
    figures: {
      runs: runIds.length,
      ...Object.fromEntries(Object.entries(status).map(([k, v]) => [`runs ${k}`, v])),
      'runs stuck': stuck.length,
      interactions,
      'resolved exactly once': resolvedOnce,
      'answered / expired': `${answered} / ${expired}`,
      'answers delivered once (log)': answersDelivered,
      'workspace effects applied once': writesApplied,
      'answers sent (late on purpose)': `${input.sent.size} (${[...input.sent.values()].filter((s) => s.late).length})`,
      'answer outcomes': Object.entries(outcomes).map(([k, v]) => `${k} ${v}`).join(', '),
      'acknowledged answers lost': ackedLost,
      'events never delivered (seq reused after the loss)': unseen,
      'runs that wrote in the lost second': touched.size,
      'client events / reconnects': streams.summary,
    },
    violations,
    lost,
  };
}

function resolvedPerInteraction(events: ParleyEvent[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of events) {
    if (event.type === 'interaction.resolved') {
      const id = (event.data as { interactionId: string }).interactionId;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}

/**
 * Each client's stream holds every event the tenant's stream holds between the first and the last
 * it received, none twice, across its failovers. A seq received for two different events would be
 * one issued again after an AOF loss, which the seq floor rules out.
 */
function clientStreams(clients: EventClient[], stream: ParleyEvent[], report: (message: string) => void): { summary: string } {
  const storedSeqs = stream.map((event) => event.seq);
  let events = 0;
  let reconnects = 0;
  for (const client of clients) {
    events += client.events.length;
    reconnects += client.reconnects.length;
    const { gaps, duplicates } = client.gapsAndDuplicates(storedSeqs);
    const bySeq = new Map<number, string[]>();
    for (const event of client.events) {
      bySeq.set(event.seq, [...(bySeq.get(event.seq) ?? []), JSON.stringify(event)]);
    }
    const identical = duplicates.filter((seq) => new Set(bySeq.get(seq)).size === 1);
    const reissued = duplicates.filter((seq) => new Set(bySeq.get(seq)).size > 1);
    if (identical.length > 0) {
      report(`${client.name}: ${identical.length} duplicate events (e.g. seq ${identical.slice(0, 5).join(', ')})`);
    }
    if (gaps.length > 0) {
      report(`${client.name}: ${gaps.length} missing seqs (e.g. ${gaps.slice(0, 5).join(', ')})`);
    }
    if (reissued.length > 0) {
      report(`${client.name}: ${reissued.length} seqs (${reissued[0]}..${reissued.at(-1)}) issued again for other events after Redis lost them`);
    }
  }
  return { summary: `${events} / ${reconnects}` };
}

/** Runs with an event the clients saw in the seqs Redis lost: they wrote in the lost second. */
function touchedByLoss(clients: EventClient[], loss: RedisLoss | undefined): Set<string> {
  const runs = new Set<string>();
  if (!loss || loss.seqAfter >= loss.seqBefore) {
    return runs;
  }
  for (const client of clients) {
    for (const event of client.events) {
      if (event.seq > loss.seqAfter && event.seq <= loss.seqBefore) {
        runs.add(event.runId);
      }
    }
  }
  return runs;
}

/** Events in Redis's final stream, in the reused seqs, that no client received (it skipped the seq as seen). */
function unseenReissued(clients: EventClient[], stream: ParleyEvent[], loss: RedisLoss | undefined): number {
  if (!loss || loss.seqAfter >= loss.seqBefore) {
    return 0;
  }
  const received = new Set(clients.flatMap((c) => c.events.map((e) => JSON.stringify(e))));
  return stream.filter((e) => e.seq > loss.seqAfter && e.seq <= loss.seqBefore && !received.has(JSON.stringify(e))).length;
}

/** A log as a short line of entry types and tool names, for a violation message. */
function shape(log: LogEntry[]): string {
  return log
    .map((e) => (e.type === 'assistant' ? `assistant(${e.toolCalls.map((c) => c.name).join(',')})` : e.type === 'tool_result' ? `result(${e.name})` : e.type === 'answer' ? `answer(${e.outcome})` : e.type))
    .join(' ');
}
