import { ReplyError } from 'ioredis';
import { isRedisAway } from './connection-error';

describe('isRedisAway', () => {
  it("takes a failover's errors and a Redis Cluster's slot-moving errors for Redis away (a 503 to retry), not for a fault", () => {
    const away = [
      new ReplyError('CLUSTERDOWN The cluster is down'),
      new ReplyError('TRYAGAIN Multiple keys request during rehashing of slot'),
      new ReplyError('MOVED 9083 127.0.0.1:7202'),
      new ReplyError('ASK 9557 127.0.0.1:7203'),
      new ReplyError('UNBLOCKED force unblocking client'),
      new ReplyError("READONLY You can't write against a read only replica."),
      new ReplyError('LOADING Redis is loading the dataset in memory'),
      new ReplyError('MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no'),
      new Error('Too many Cluster redirections. Last error: Connection is closed.'),
      new Error('Failed to refresh slots cache.'),
      new Error('All keys in the pipeline should belong to the same slots allocation group'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7201'), { code: 'ECONNREFUSED' }),
    ];
    expect(away.filter((error) => !isRedisAway(error)).map((error) => error.message)).toEqual([]);
    const faults = [new ReplyError('ERR Error running script'), new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'), new Error('MOVED somewhere'), new ReplyError('READONLYX'), 'CLUSTERDOWN'];
    expect(faults.filter((error) => isRedisAway(error))).toEqual([]);
  });
});
