import { ReplyError } from 'ioredis';
import { isRedisAway } from './connection-error';

describe('isRedisAway', () => {
  it("takes a Redis Cluster's failover and slot-moving errors for Redis away (a 503 to retry), not for a fault", () => {
    const away = [
      new ReplyError('CLUSTERDOWN The cluster is down'),
      new ReplyError('TRYAGAIN Multiple keys request during rehashing of slot'),
      new ReplyError('MOVED 9083 127.0.0.1:7202'),
      new ReplyError('ASK 9557 127.0.0.1:7203'),
      new ReplyError('UNBLOCKED force unblocking client'),
      new Error('Too many Cluster redirections. Last error: Connection is closed.'),
      new Error('Failed to refresh slots cache.'),
      new Error('All keys in the pipeline should belong to the same slots allocation group'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7201'), { code: 'ECONNREFUSED' }),
    ];
    expect(away.filter((error) => !isRedisAway(error)).map((error) => error.message)).toEqual([]);
    const faults = [new ReplyError('ERR Error running script'), new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'), new Error('MOVED somewhere'), 'CLUSTERDOWN'];
    expect(faults.filter((error) => isRedisAway(error))).toEqual([]);
  });
});
