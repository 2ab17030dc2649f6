import type { Latency } from './stats';
import { cell, ms, n0, n1, n2, us } from './format';

export interface CommandFigures {
  /** Commands this process sent, per cycle (pipelined commands count one each). */
  local: number;
  /** Server-side INFO delta per cycle (includes commands inside Lua scripts), background-corrected. */
  server: number;
}

export interface ApprovalResults {
  runs: number;
  callsPerRun: number;
  concurrency: number;
  cycles: number;
  ms: number;
  perSec: number;
  resume: Latency;
  absorbed: number;
  commands: CommandFigures;
}

export interface GrantResults {
  sequential: { runs: number; callsPerRun: number; step: Latency };
  runs: number;
  coveredPerRun: number;
  concurrency: number;
  covered: number;
  ms: number;
  bareMs: number;
  perSec: number;
  marginalPerSec: number;
  step: Latency;
  commands: CommandFigures;
  marginalCommands: CommandFigures;
  smismemberPerCall: number;
  breakdown: Array<[string, number]>;
}

export interface CommandLineResults {
  lines: number;
  rounds: number;
  callsPerRound: number;
  opsPerSec: number;
  usPerCall: number;
  minUs: number;
  maxUs: number;
  perLine: Array<{ line: string; verdict: string; us: number }>;
}

/** The hot paths measured in one process (approvals, run grants, command-line analysis). */
export function renderHotPaths(r: { approvals?: ApprovalResults; grants?: GrantResults; commandLine?: CommandLineResults }): string[] {
  const out: string[] = [];
  out.push('## Other hot paths (one process)');
  out.push('');
  out.push('These run in one Node.js process (the e2e `TestStack`: gateway, loop-worker and interaction-service with the');
  out.push('answering client; worker concurrency 50) on the same Redis, and count the commands that process **sends**');
  out.push('(inside ioredis, `bench/support/meter.ts`: a pipelined command counts one, a script call counts one).');
  out.push('');
  if (r.approvals) {
    const a = r.approvals;
    out.push(`**Approve → resume** (${a.runs} concurrent runs, each calling \`write_file\` ${a.callsPerRun} times, every call approved with \`allow_once\`):`);
    out.push(`${n0(a.perSec)} cycles/s (${a.cycles} in ${(a.ms / 1000).toFixed(2)} s), answer → resume p50 ${ms(a.resume.p50)} / p99 ${ms(a.resume.p99)}, ${n1(a.commands.local)} commands sent per cycle.`);
    out.push('');
  }
  if (r.grants) {
    const g = r.grants;
    out.push(`**Tool calls covered by a run grant** (first \`write_file\` approved with \`allow_run\` on the whole workspace, then ${g.coveredPerRun} calls`);
    out.push(`that run on the grant, no person): ${n0(g.perSec)} calls/s gross over ${g.runs} concurrent runs (${n0(g.marginalPerSec)} marginal, minus a round`);
    out.push(`without covered calls); one covered step p50 ${ms(g.sequential.step.p50)} / p99 ${ms(g.sequential.step.p99)} one run at a time; ${n1(g.marginalCommands.local)} commands sent`);
    out.push(`per covered call (marginal), of which \`SMISMEMBER\` on the grant set ${n2(g.smismemberPerCall)} (asserted: exactly one).`);
    out.push('');
    out.push('| command (marginal, per covered call) | sent |');
    out.push('|---|---|');
    g.breakdown.forEach(([name, v]) => out.push(`| \`${name}\` | ${n2(v)} |`));
    out.push('');
  }
  if (r.commandLine) {
    const cl = r.commandLine;
    out.push(`**Shell command-line analysis** (\`analyseCommandLine\`, read for every \`shell\` call that needs approval; pure CPU):`);
    out.push(`${n0(cl.opsPerSec)} calls/s, ${us(cl.usPerCall)} per call over a mix of ${cl.lines} lines (median of ${cl.rounds} rounds of ${n0(cl.callsPerRound)}; fastest ${us(cl.minUs)}, slowest ${us(cl.maxUs)}).`);
    out.push('');
    out.push('| line | what the scanner makes of it | µs per call |');
    out.push('|---|---|---|');
    cl.perLine.forEach((p) => out.push(`| ${cell(p.line)} | ${p.verdict} | ${us(p.us)} |`));
    out.push('');
  }
  return out;
}
