import StandaloneConnector from 'ioredis/built/connectors/StandaloneConnector';
import type { ErrorEmitter } from 'ioredis/built/connectors/AbstractConnector';
import type ConnectorConstructor from 'ioredis/built/connectors/ConnectorConstructor';
import type { NetStream } from 'ioredis/built/types';
import { batchWritesPerTick } from './write-batching';

/**
 * ioredis' own connector (TCP or TLS to one node), whose connection sends the commands of one tick
 * as one write. Unlike `enableAutoPipelining`, it builds no pipeline per tick: a lone command costs
 * what it did, many cost one system call. Every (re)connection goes through it, `duplicate()`s and
 * cluster node connections too.
 */
class BatchingConnector extends StandaloneConnector {
  override async connect(emitter: ErrorEmitter): Promise<NetStream> {
    const stream = await super.connect(emitter);
    batchWritesPerTick(stream);
    return stream;
  }
}

// ioredis types a connector's options as `unknown`; it hands it the connection's own options.
export const BATCHING_CONNECTOR = BatchingConnector as unknown as ConnectorConstructor;
