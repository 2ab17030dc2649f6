import { readFileSync, writeFileSync } from 'node:fs';
import type { PassReport, Takeover } from './chaos.pass';

/** The figures of both passes as one markdown table, a column per pass. */
export function figuresTable(passes: PassReport[]): string {
  const rows = new Map<string, string[]>();
  const put = (name: string, i: number, value: unknown) => {
    const row = rows.get(name) ?? passes.map(() => '');
    row[i] = String(value);
    rows.set(name, row);
  };
  passes.forEach((p, i) => {
    put('redis appendfsync', i, p.options.appendfsync);
    put('duration (s)', i, p.seconds.toFixed(0));
    const kills = Object.entries(p.faults.kills);
    put('kills (kill -9)', i, `${kills.reduce((n, [, v]) => n + v, 0)} (${kills.map(([k, v]) => `${k} ${v}`).join(', ')})`);
    put('restarts', i, p.faults.restarts);
    put('redis restarts (kill -9, AOF reload)', i, p.faults.redisRestarts);
    put('failed run starts (retried)', i, p.startFailures);
    for (const [name, value] of Object.entries(p.check.figures)) {
      put(name, i, value);
    }
    put('seconds to settle after the faults', i, p.settleSeconds.toFixed(1));
    // A takeover whose wait a Redis restart cut into waits for Redis too: told apart.
    const redisCut = ({ killedAt, ms }: Takeover) => p.faults.redisDown.some(({ from }) => from >= killedAt && from <= killedAt + ms);
    const spread = (takeovers: Takeover[]) => {
      const t = takeovers.map(({ ms }) => ms).sort((a, b) => a - b);
      return t.length ? `${t.length}, ${(t[Math.floor(t.length / 2)] / 1000).toFixed(1)} / ${(t[t.length - 1] / 1000).toFixed(1)}` : '0';
    };
    put('takeovers after a worker kill: runs, median / max (s)', i, spread(p.takeovers.filter((t) => !redisCut(t))));
    put('… and those a Redis restart cut into: runs, median / max (s)', i, spread(p.takeovers.filter(redisCut)));
    put('seq at the redis kill / after restart', i, p.loss ? `${p.loss.seqBefore} / ${p.loss.seqAfter}` : '-');
    put('lost in the AOF window (reported)', i, p.check.lost.length);
    put('invariant violations', i, p.check.violations.length);
  });
  const header = `| figure | ${passes.map((p) => `pass ${p.options.name}`).join(' | ')} |`;
  const rule = `|---|${passes.map(() => '---').join('|')}|`;
  return [header, rule, ...[...rows].map(([name, values]) => `| ${name} | ${values.join(' | ')} |`)].join('\n');
}

const BEGIN = '<!-- chaos:latest:begin -->';
const END = '<!-- chaos:latest:end -->';

/** Replaces the "latest results" section of docs/chaos.md between its markers. */
export function writeLatest(file: string, passes: PassReport[], totalSeconds: number): void {
  const details = passes.flatMap((p) => [
    ...(p.check.lost.length ? [``, `Lost in pass ${p.options.name} (AOF ${p.options.appendfsync}):`, ...p.check.lost.slice(0, 10).map((l) => `- ${l}`)] : []),
    ...(p.check.violations.length ? [``, `Violations in pass ${p.options.name}:`, ...p.check.violations.slice(0, 10).map((l) => `- ${l}`)] : []),
  ]);
  const section = [
    BEGIN,
    `Run on ${new Date().toISOString().slice(0, 10)}, ${passes.reduce((n, p) => n + p.options.runs, 0)} runs requested, ${(totalSeconds / 60).toFixed(1)} min in all (2 cores).`,
    '',
    figuresTable(passes),
    ...details,
    END,
  ].join('\n');
  const text = readFileSync(file, 'utf8');
  const from = text.indexOf(BEGIN);
  const to = text.indexOf(END);
  writeFileSync(file, from >= 0 && to > from ? `${text.slice(0, from)}${section}${text.slice(to + END.length)}` : `${text.trimEnd()}\n\n${section}\n`);
}
