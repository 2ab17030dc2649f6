/**
 * The multi-process scenario as a reusable suite: 2 gateways, 3 loop-workers and 2
 * interaction-services as separate OS processes against one Redis (or one Redis Cluster). Clients
 * on both gateways watch the tenant's events while runs park on questions and are answered through
 * either gateway; then a gateway is killed under a client. test/e2e/multi-process.e2e.spec.ts runs
 * it on the shared Redis, test/e2e/cluster.e2e.spec.ts on a cluster.
 */
import type { ParleyEvent } from '@parley/contracts';
import { askerAgent } from '../support/agents';
import { waitFor } from '../support/wait-for';
import type { EventClient } from './event.client';
import { Harness, type HarnessOptions } from './harness';

const BATCH = 8;

export interface MultiProcessScenarioOptions {
  /** Names the suite, the key prefix and the log folder. */
  name: string;
  /** Where the services' Redis is, asked when the suite starts (e.g. a cluster started in a beforeAll). */
  redis?: () => Pick<HarnessOptions, 'redisUrl' | 'redisClusterNodes'>;
  /** More tests in the same suite, on the same harness, after the scenario's own. */
  more?: (harness: () => Harness) => void;
}

export function describeMultiProcess(title: string, options: MultiProcessScenarioOptions): void {
  describe(title, () => {
    let h: Harness;
    let clients: EventClient[];
    let alice1: EventClient;
    let watcher2: EventClient;
    /** Awaited by watcher2 before it reconnects: lets a test make events happen while it is away. */
    let reconnectGate: Promise<void> = Promise.resolve();

    beforeAll(async () => {
      h = await Harness.start({
        name: options.name,
        ...options.redis?.(),
        gateways: 2,
        workers: 3,
        interactionServices: 2,
        agents: [askerAgent('asker')],
        // Few slots per worker, so that the runs of a batch spread over the three of them.
        env: { PARLEY_WORKER_CONCURRENCY: '2' },
      });
      // Everyone subscribes from the start of the tenant's history (since 0).
      alice1 = await h.client(1, { token: h.token(), since: 0, name: 'alice@gateway-1' });
      watcher2 = await h.client(2, { since: 0, name: 'admin@gateway-2', beforeReconnect: () => reconnectGate });
      clients = [alice1, await h.client(1, { since: 0, name: 'admin@gateway-1' }), await h.client(2, { token: h.token(), since: 0, name: 'alice@gateway-2' }), watcher2];
    });

    afterAll(async () => {
      await h?.close();
    });

    async function startBatch(gateways: number[], size = BATCH): Promise<string[]> {
      return Promise.all(Array.from({ length: size }, (_, i) => h.startRun(gateways[i % gateways.length], 'asker', `task ${i}`)));
    }

    /** Waits until every run is parked on its question and the question is open; returns their hashes. */
    async function parked(runIds: string[]): Promise<Array<Record<string, string>>> {
      const open = await waitFor(async () => {
        const ids = await Promise.all(runIds.map((id) => h.openQuestion(id)));
        return ids.every(Boolean);
      }, { message: `${runIds.length} runs to park on open questions` });
      expect(open).toBe(true);
      return Promise.all(runIds.map((id) => h.runHash(id)));
    }

    async function answerAll(runIds: string[], gateways: number[]): Promise<void> {
      const hashes = await parked(runIds);
      await Promise.all(hashes.map((run, i) => h.answer(gateways[i % gateways.length], run.pendingInteractionId, { text: `answer ${i}` })));
      await waitFor(async () => (await Promise.all(runIds.map((id) => h.runHash(id)))).every((run) => run.status === 'finished'), {
        message: `${runIds.length} runs to finish`,
      });
    }

    /** Every client has every event of the tenant, once, in order, identical to the stream. */
    async function expectSameEventsEverywhere(): Promise<number> {
      const last = await h.tenantSeq();
      await Promise.all(clients.map((client) => client.waitForSeq(last)));
      const events = await h.tenantEvents();
      expect(events.at(-1)?.seq).toBe(last);
      const storedSeqs = events.map((event) => event.seq);
      const stored = events.map((event) => JSON.stringify(event));
      for (const client of clients) {
        expect({ client: client.name, ...client.gapsAndDuplicates(storedSeqs) }).toEqual({ client: client.name, gaps: [], duplicates: [] });
        expect({ client: client.name, seqs: client.seqs() }).toEqual({ client: client.name, seqs: storedSeqs });
        expect(client.events.map((event) => JSON.stringify(event))).toEqual(stored);
      }
      return last;
    }

    it('a client on gateway 1 answers a question asked on worker 3; every client sees every event', () =>
      h.diagnose(async () => {
        // Runs go to whichever worker is free: start batches until a run parked after a step on worker-3.
        const runIds: string[] = [];
        let picked: string | undefined;
        for (let batch = 1; batch <= 5 && !picked; batch++) {
          const ids = await startBatch([1, 2]);
          runIds.push(...ids);
          await parked(ids);
          // The log line follows the park step: wait until every run's is there.
          await waitFor(() => ids.every((id) => h.parkedBy(id) !== undefined), { message: 'the workers to log their parking steps' });
          picked = ids.find((id) => h.parkedBy(id) === 'worker-3');
        }
        expect(picked).toBeDefined();
        const runId = picked!;
        const spread = runIds.map((id) => h.parkedBy(id));
        h.report(`questions asked by ${[...new Set(spread)].sort().map((w) => `${w}: ${spread.filter((s) => s === w).length}`).join(', ')}`);

        // alice learns of the question from her socket on gateway 1 and answers it there.
        const opened = (await alice1.waitForEvent((e) => e.type === 'interaction.opened' && e.runId === runId, 'the question of the run')) as Extract<
          ParleyEvent,
          { type: 'interaction.opened' }
        >;
        const ack = await alice1.answer(opened.data.interaction.id, { text: 'from gateway 1' });
        expect(ack).toMatchObject({ ok: true, interaction: { status: 'answered' } });
        const finished = await alice1.waitForEvent((e) => e.type === 'run.finished' && e.runId === runId, 'the run to finish');
        expect(finished.data).toMatchObject({ summary: 'got: from gateway 1' });
        h.report(`run ${runId}: asked on worker-3, answered through gateway-1, finished on ${(await h.runHash(runId)).worker}`);

        const log = await h.runLog(runId);
        expect(log.filter((e) => e.type === 'answer')).toHaveLength(1);
        expect(log.filter((e) => e.type === 'question')).toHaveLength(1);

        await answerAll(
          runIds.filter((id) => id !== runId),
          [1, 2],
        );
        await expectSameEventsEverywhere();
        expect(h.unexpectedExits()).toEqual([]);
        // Each service says where its /health and /metrics are.
        for (const service of h.services()) {
          expect({ service: service.name, told: service.lines.some((line) => line.includes(`health and metrics on ${service.opsUrl} `)) }).toEqual({ service: service.name, told: true });
        }
      }));

    it('a client whose gateway is killed moves to the other and replays what it missed, no gap, no duplicate', () =>
      h.diagnose(async () => {
        const gone = h.gateway(2).url;
        let release!: () => void;
        reconnectGate = new Promise((resolve) => (release = resolve));
        const covered = watcher2.lastSeq;

        await h.gateway(2).kill9();
        await watcher2.waitForDrop();
        // Events watcher2 is not there for: runs start, park, and some get their answer.
        const runIds = await startBatch([1], 4);
        await answerAll(runIds.slice(0, 2), [1]);
        await parked(runIds.slice(2));
        const missed = (await h.tenantEvents()).filter((event) => event.seq > covered).length;
        expect(missed).toBeGreaterThan(0);

        release();
        await waitFor(() => watcher2.reconnects.length > 0, { message: 'admin@gateway-2 to reconnect' });
        expect(watcher2.reconnects[0]).toMatchObject({ from: gone, to: h.gateway(1).url, since: covered });
        h.report(`gateway-2 killed: ${watcher2.name} resubscribed on gateway-1 with since ${covered} and replayed ${missed} missed events`);

        // Live again: the rest of the runs finish while it listens on gateway 1.
        await answerAll(runIds.slice(2), [1]);

        // The killed gateway comes back on its port, and a new client there replays the whole history.
        await h.gateway(2).restart();
        expect(h.gateway(2).url).toBe(gone);
        clients.push(await h.client(2, { since: 0, name: 'late@gateway-2' }));
        await expectSameEventsEverywhere();
        expect(h.unexpectedExits()).toEqual([]);
      }));

    options.more?.(() => h);
  });
}
