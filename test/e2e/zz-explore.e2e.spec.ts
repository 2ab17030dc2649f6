import { TestStack } from '../support/stack';
import { waitFor } from '../support/wait-for';

async function snap(stack: TestStack): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  let cursor = '0';
  do {
    const [next, keys] = await stack.redis.scan(cursor, 'MATCH', `${stack.config.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) {
      const t = await stack.redis.type(k);
      let v: unknown;
      if (t === 'string') v = await stack.redis.get(k);
      else if (t === 'hash') v = await stack.redis.hgetall(k);
      else if (t === 'list') v = await stack.redis.lrange(k, 0, -1);
      else if (t === 'zset') v = await stack.redis.zrange(k, 0, -1, 'WITHSCORES');
      else if (t === 'set') v = await stack.redis.smembers(k);
      else if (t === 'stream') v = await stack.redis.xrevrange(k, '+', '-', 'COUNT', 1);
      out[k] = `${t}:${JSON.stringify(v)}`;
    }
  } while (cursor !== '0');
  return out;
}

it('explore', async () => {
  const stack = await TestStack.start();
  const runId = await stack.startRun('demo');
  await stack.waitForQuestion(runId);
  let prev = await snap(stack);
  console.log(Object.keys(prev).sort().join('\n'));
  const t0 = Date.now();
  let n = 0;
  await waitFor(async () => {
    const cur = await snap(stack);
    const all = new Set([...Object.keys(prev), ...Object.keys(cur)]);
    for (const k of all) if (prev[k] !== cur[k]) console.log(Date.now() - t0, k, prev[k]?.slice(0, 200), '=>', cur[k]?.slice(0, 200));
    prev = cur;
    return ++n > 40;
  }, { intervalMs: 200, timeoutMs: 30000 });
  await stack.close();
});
