/**
 * Parley as it is deployed: 2 gateways, 3 loop-workers and 2 interaction-services as separate OS
 * processes against one Redis. Clients on both gateways watch the tenant's events while runs park
 * on questions and are answered through either gateway; then a gateway is killed under a client.
 * The scenario itself is shared with the Redis Cluster suite (test/harness/multi-process.scenario.ts).
 */
import { describeMultiProcess } from '../harness/multi-process.scenario';

describeMultiProcess('multi-process: 2 gateways, 3 loop-workers, 2 interaction-services', { name: 'multi' });
