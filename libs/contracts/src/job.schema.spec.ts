import { jobIds, runOfJobId } from './job.schema';

describe('runOfJobId', () => {
  it('reads back the run of a run job id', () => {
    const run = { tenant: 't_1-a', runId: '2421c1f1-4c20-4704-ab42-aa652f14fb04', wake: 12 };
    expect(runOfJobId(jobIds.run(run))).toEqual(run);
  });

  it.each(['dl.t1.1700000000000', 'sched.agent.daily', 'run.t1.r1', 'run.t1.r1.1.2', 'run.t1.r1.x', 'run..r1.0', 'run.T1.r1.0', 'run.t1.r 1.0'])(
    'is undefined for %s',
    (jobId) => {
      expect(runOfJobId(jobId)).toBeUndefined();
    },
  );
});
