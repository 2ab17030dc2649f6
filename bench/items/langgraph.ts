/**
 * Item 3: the same park/resume cycle in LangGraph JS: a node calls `interrupt()` (the run parks in
 * the checkpointer), and `invoke(new Command({ resume }))` resumes it. With MemorySaver (in the
 * bench process, neither durable nor shared) and PostgresSaver on a database of its own.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt, type BaseCheckpointSaver } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { QUICK, say } from '../support/env';
import { pool } from '../support/stats';
import { CONC_QUESTIONS, CONC_RUNS } from './cycles';

const PG_HOST = process.env.BENCH_PG_HOST ?? '127.0.0.1';
const PG_USER = process.env.BENCH_PG_USER ?? 'postgres';

export interface LangGraphFigures {
  cycles: number;
  ms: number;
  perSec: number;
}

export interface LangGraphResults {
  threads: number;
  questionsPerThread: number;
  memory: LangGraphFigures;
  postgres: LangGraphFigures | { error: string };
}

const State = Annotation.Root({
  asked: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }),
  last: Annotation<string>({ reducer: (_, next) => next, default: () => '' }),
});

function graph(questions: number, checkpointer: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode('ask', (state) => {
      const answer = interrupt<{ question: string }, string>({ question: `Question ${state.asked + 1}?` });
      return { asked: state.asked + 1, last: answer };
    })
    .addConditionalEdges('ask', (state) => (state.asked < questions ? 'ask' : END))
    .addEdge(START, 'ask')
    .compile({ checkpointer });
}

/** `threads` threads at once, each parked and resumed `questions` times; the clock covers every start and resume. */
async function cycles(checkpointer: BaseCheckpointSaver, threads: number, questions: number): Promise<LangGraphFigures> {
  const app = graph(questions, checkpointer);
  const run = async (prefix: string, count: number) => {
    let resumed = 0;
    await pool(Array.from({ length: count }), count, async (_, i) => {
      const config = { configurable: { thread_id: `${prefix}-${i}` } };
      let result: any = await app.invoke({ asked: 0 }, config);
      while (result.__interrupt__?.length) {
        result = await app.invoke(new Command({ resume: 'ok' }), config);
        resumed++;
      }
      expect(result.asked).toBe(questions);
    });
    return resumed;
  };
  await run('warm', 20);
  const t0 = performance.now();
  const resumed = await run('bench', threads);
  const ms = performance.now() - t0;
  expect(resumed).toBe(threads * questions);
  return { cycles: resumed, ms, perSec: (resumed * 1000) / ms };
}

function psql(sql: string): void {
  execFileSync('psql', ['-h', PG_HOST, '-U', PG_USER, '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-q', '-c', sql], { stdio: ['ignore', 'ignore', 'pipe'] });
}

export async function runLangGraph(): Promise<LangGraphResults> {
  const threads = CONC_RUNS;
  const questions = CONC_QUESTIONS;
  const memory = await cycles(new MemorySaver(), threads, questions);
  say(`3. langgraph MemorySaver ${memory.perSec.toFixed(0)} cycles/s`);

  let postgres: LangGraphResults['postgres'];
  const database = `parley_bench_${randomUUID().slice(0, 8)}`;
  try {
    psql(`CREATE DATABASE ${database}`);
  } catch (error) {
    const message = (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error);
    say(`3. PostgresSaver skipped: no PostgreSQL at ${PG_HOST} (${message})`);
    return { threads, questionsPerThread: questions, memory, postgres: { error: message } };
  }
  const saver = PostgresSaver.fromConnString(`postgresql://${PG_USER}@${PG_HOST}:5432/${database}`);
  try {
    await saver.setup();
    postgres = await cycles(saver, QUICK ? Math.min(threads, 40) : threads, questions);
    say(`3. langgraph PostgresSaver ${postgres.perSec.toFixed(0)} cycles/s`);
  } finally {
    await saver.end();
    psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
  return { threads, questionsPerThread: questions, memory, postgres };
}
