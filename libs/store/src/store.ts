import type { RedisClient } from '@parley/platform';
import { CascadeRepository } from './cascade.repository';
import { DeadlineRepository } from './deadline.repository';
import { EventRepository } from './event.repository';
import { InflightRepository } from './inflight.repository';
import { InteractionRepository } from './interaction.repository';
import { LimitsRepository } from './limits/limits.repository';
import { RunMessageRepository } from './run-message.repository';
import { RunRepository } from './run.repository';
import { StartKeyRepository } from './start-key.repository';
import { StoreContext, type StoreOptions } from './store.context';

/** Everything Parley keeps in Redis, behind one object the apps inject. */
export class ParleyStore {
  readonly ctx: StoreContext;
  readonly runs: RunRepository;
  readonly messages: RunMessageRepository;
  readonly interactions: InteractionRepository;
  readonly events: EventRepository;
  readonly deadlines: DeadlineRepository;
  readonly limits: LimitsRepository;
  readonly inflight: InflightRepository;
  readonly cascades: CascadeRepository;
  readonly startKeys: StartKeyRepository;

  constructor(redis: RedisClient, options: StoreOptions) {
    this.ctx = new StoreContext(redis, options);
    this.runs = new RunRepository(this.ctx);
    this.messages = new RunMessageRepository(this.ctx);
    this.interactions = new InteractionRepository(this.ctx);
    this.events = new EventRepository(this.ctx);
    this.deadlines = new DeadlineRepository(this.ctx);
    this.limits = new LimitsRepository(this.ctx);
    this.inflight = new InflightRepository(this.ctx);
    this.cascades = new CascadeRepository(this.ctx);
    this.startKeys = new StartKeyRepository(this.ctx);
  }
}
