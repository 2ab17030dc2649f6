/**
 * `npm run chaos` (never part of `npx jest`: the name ends in .run.ts). Two passes of scripted runs
 * under kill -9 of random services and of Redis, AOF everysec then always; prints the figures,
 * writes them to docs/chaos.md, and fails when an invariant is broken.
 * CHAOS_RUNS: runs over both passes (default 1000); CHAOS_QUICK=1: a ~50-run smoke test.
 */
import { resolve } from 'node:path';
import { runPass, type PassReport } from './chaos.pass';
import { figuresTable, writeLatest } from './chaos.report';

const quick = process.env.CHAOS_QUICK === '1';
const total = Number(process.env.CHAOS_RUNS ?? (quick ? 50 : 1000));
const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);

/** mulberry32: a seeded random, so a failing pass can be replayed with CHAOS_SEED. */
function seeded(start: number): () => number {
  let a = start >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe(`chaos: ${total} runs under kill -9 (seed ${seed})`, () => {
  it('keeps every invariant through worker, gateway, interaction-service and Redis crashes', async () => {
    const random = seeded(seed);
    const started = Date.now();
    const passes: PassReport[] = [];
    for (const [name, appendfsync] of [['A', 'everysec'], ['B', 'always']] as const) {
      const report = await runPass({ name, appendfsync, runs: Math.ceil(total / 2), window: quick ? 12 : 40, minSeconds: quick ? 20 : 120, loseLastMs: appendfsync === 'everysec' ? 1000 : 0, lateFraction: 0.05, settleMs: 90_000, random });
      passes.push(report);
      console.log(`[chaos] pass ${name} done in ${report.seconds.toFixed(0)} s; faults:\n  ${report.faults.lines.join('\n  ')}\nslow to end:\n  ${report.slow.join('\n  ')}`);
    }
    const table = figuresTable(passes);
    console.log(`[chaos] seed ${seed}\n${table}`);
    for (const p of passes) {
      for (const line of [...p.check.lost.slice(0, 20).map((l) => `lost (AOF ${p.options.appendfsync}): ${l}`), ...p.check.violations.map((v) => `VIOLATION: ${v}`)]) {
        console.log(`[chaos] pass ${p.options.name}: ${line}`);
      }
    }
    if (!quick) {
      writeLatest(resolve(__dirname, '..', '..', 'docs', 'chaos.md'), passes, (Date.now() - started) / 1000);
    }
    expect(passes.flatMap((p) => p.check.violations.map((v) => `pass ${p.options.name}: ${v}`))).toEqual([]);
  });
});
