import { randomUUID } from 'node:crypto';
import { Inject, Logger, type OnModuleDestroy } from '@nestjs/common';
import { decodeProtectedHeader } from 'jose';
import {
  ConnectedSocket,
  MessageBody,
  SubscribeMessage,
  WebSocketGateway,
  WebSocketServer,
  type OnGatewayConnection,
  type OnGatewayDisconnect,
  type OnGatewayInit,
} from '@nestjs/websockets';
import type { Namespace, Socket } from 'socket.io';
import {
  AnswerBodySchema,
  AnswerMessageSchema,
  ConflictError,
  ApprovalsMessageSchema,
  ClaimMessageSchema,
  RunMessageSchema,
  StopMessageSchema,
  type Run,
  SOCKET,
  SubscribeMessageSchema,
  parseAnswerBody,
  parseOrThrow,
  type Interaction,
  type ParleyEvent,
  type TokenClaims,
} from '@parley/contracts';
import { metrics, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyStore, SOCKET_REFRESH_MS } from '@parley/store';
import { AuthService, bearerToken } from '../auth/auth.service';
import { toErrorReply } from '../http/error.filter';
import { InteractionsService, requireClaimer, type ApprovalPage } from '../interactions/interactions.service';
import { RunsService } from '../runs/runs.service';
import { EventFeed } from './event.feed';
import { closeAt, socketEndsAt } from './socket.expiry';
import { admits, matches, type Subscription } from './subscription';
import { closeIfBackedUp, writtenOut } from './socket.writes';
import { assertSinceIssued } from './since.check';
import { SubscribeBudget } from './subscribe.budget';
import { storeReady } from '../http/store-ready.guard';
import { socketReply, type Ack } from './socket.reply';

interface SocketData {
  user: TokenClaims;
  /** The bearer token it signed in with. */
  token?: string;
  /** Signed with a key of the key set (not the shared secret): checked again every SOCKET_REFRESH_MS. */
  keySetToken?: boolean;
  subscription?: Subscription;
  /** How many subscribes this socket sent: each takes the next number as it arrives. */
  subscribes?: number;
  /** The number of the latest subscribe whose message was accepted: it replaces any earlier one still in progress. */
  accepted?: number;
  /** This socket's member in the tenant's connection set ("<gateway>:<socket>\n<user digest>"), once it holds a slot. */
  slot?: string;
  subscribeBudget?: SubscribeBudget;
}


const REPLAY_PAGE = 500;

@WebSocketGateway({ namespace: SOCKET.namespace, cors: { origin: true } })
export class EventsGateway implements OnGatewayInit, OnGatewayConnection, OnGatewayDisconnect, OnModuleDestroy {
  private readonly logger = new Logger(EventsGateway.name);
  private readonly sockets = new Map<string, Set<Socket>>();
  private readonly unlisten: () => void;
  /** Names this gateway's sockets in the tenant connection sets shared by all gateways. */
  private readonly instanceId = randomUUID();
  private readonly refresher: NodeJS.Timeout;
  private rechecking = false;

  @WebSocketServer() namespace!: Namespace;

  constructor(
    private readonly auth: AuthService,
    private readonly feed: EventFeed,
    private readonly store: ParleyStore,
    private readonly runs: RunsService,
    private readonly interactions: InteractionsService,
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
  ) {
    this.unlisten = feed.onEvent((event) => this.fanOut(event));
    // Live sockets keep their slots (a crashed gateway's expire and stop counting), and their tokens are checked again.
    this.refresher = setInterval(() => {
      this.refreshSlots()
        .then(() => this.recheckTokens())
        .catch((error: unknown) => this.logger.warn(`checking the sockets' tokens failed: ${(error as Error).message}`));
    }, SOCKET_REFRESH_MS);
    this.refresher.unref();
  }

  afterInit(namespace: Namespace): void {
    namespace.use((socket, next) => {
      const token = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
      const header = typeof token === 'string' && token !== '' ? `Bearer ${token}` : socket.handshake.headers.authorization;
      // While Redis is away, a handshake waits for it as a request does, then is refused (503, nothing applied).
      storeReady(this.store.ctx.redis)
        .then(() => this.auth.authenticate(header))
        .then(async (user) => {
          const bearer = typeof token === 'string' && token !== '' ? token : bearerToken(header);
          const keySetToken = bearer !== undefined && decodeProtectedHeader(bearer).alg !== 'HS256';
          Object.assign(socket.data as SocketData, { user, token: bearer, keySetToken });
          const endsAt = socketEndsAt(bearer, this.config.jwtClockSkewSecs);
          // A slot in the tenant's and the user's connection counts (across gateways); past a limit the handshake is refused.
          const limits = { tenant: this.config.limitSockets, user: this.config.limitSocketsPerUser };
          (socket.data as SocketData).slot = await this.store.limits.acquireSocket(user.tenant, user.sub, `${this.instanceId}:${socket.id}`, limits);
          if (socket.conn.readyState !== 'open') {
            // The client left while the slot was taken: give it back (no disconnect event follows).
            await this.releaseSlot(socket);
          } else {
            closeAt(socket, endsAt);
          }
          next();
        })
        .catch((error: unknown) => {
          const reply = toErrorReply(error);
          if (reply.status >= 500) {
            this.logger.error(`socket connection refused: ${(error as Error).message}`);
          }
          // The client sees the message, and the error body as the connect error's `data`.
          next(Object.assign(new Error(reply.body.error.message), { data: reply.body }));
        });
    });
  }

  onModuleDestroy(): void {
    this.unlisten();
    clearInterval(this.refresher);
  }

  handleConnection(socket: Socket): void {
    const { tenant } = data(socket).user;
    let set = this.sockets.get(tenant);
    if (!set) {
      set = new Set();
      this.sockets.set(tenant, set);
    }
    set.add(socket);
    metrics.socketConnections.inc();
  }

  handleDisconnect(socket: Socket): void {
    const tenant = data(socket).user?.tenant;
    const set = tenant ? this.sockets.get(tenant) : undefined;
    if (set?.delete(socket)) {
      metrics.socketConnections.dec();
    }
    if (set?.size === 0) {
      this.sockets.delete(tenant);
      this.feed.untrack(tenant, () => !this.sockets.has(tenant));
    }
    void this.releaseSlot(socket);
  }

  private async releaseSlot(socket: Socket): Promise<void> {
    const { user, slot } = data(socket);
    if (!slot) {
      return;
    }
    data(socket).slot = undefined;
    try {
      await this.store.limits.releaseSocket(user.tenant, slot);
    } catch (error) {
      // The slot expires on its own once no longer refreshed.
      this.logger.warn(`releasing a socket slot failed: ${(error as Error).message}`);
    }
  }

  private async refreshSlots(): Promise<void> {
    const members = new Map<string, string[]>();
    for (const [tenant, set] of this.sockets) {
      const slots = [...set].flatMap((socket) => data(socket).slot ?? []);
      if (slots.length > 0) {
        members.set(tenant, slots);
      }
    }
    try {
      await this.store.limits.refreshSockets(members);
    } catch (error) {
      this.logger.warn(`refreshing socket slots failed: ${(error as Error).message}`);
    }
  }

  /**
   * Checks again the token of every socket signed in with a key of the key set: one whose key was
   * removed from it (or refused for any other reason) is closed. Shared-secret tokens are left alone
   * (that secret is not taken back while the gateway runs). A key set that cannot be fetched ends the
   * pass and closes nothing; a pass still running when the next is due lets it go.
   */
  async recheckTokens(): Promise<void> {
    if (this.rechecking) {
      return;
    }
    this.rechecking = true;
    try {
      for (const set of this.sockets.values()) {
        for (const socket of [...set]) {
          const { token, keySetToken } = data(socket);
          if (!keySetToken || token === undefined) {
            continue;
          }
          try {
            await this.auth.authenticate(`Bearer ${token}`);
          } catch (error) {
            const { status } = toErrorReply(error);
            if (status !== 401 && status !== 403) {
              return;
            }
            socket.disconnect(true);
          }
        }
      }
    } finally {
      this.rechecking = false;
    }
  }

  /**
   * Replaces the socket's subscription. Until the replay is over, live events wait in its buffer. A
   * subscribe that a later one overtook, or that fails once it was the socket's subscription, leaves
   * no subscription of its own behind (nothing buffers for it) and is acked with an error; one whose
   * message is refused changes nothing.
   */
  @SubscribeMessage(SOCKET.subscribe)
  async subscribe(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<Ack<{ lastSeq: number; truncated: boolean }>> {
    let subscription: Subscription | undefined;
    try {
      await storeReady(this.store.ctx.redis);
      const message = parseOrThrow(SubscribeMessageSchema, body ?? {}, 'subscribe message');
      (data(socket).subscribeBudget ??= new SubscribeBudget(this.config.limitSocketSubscribesPerMinute)).spend();
      const user = data(socket).user;
      const ticket = (data(socket).subscribes = (data(socket).subscribes ?? 0) + 1);
      const overtaken = (): void => {
        if ((data(socket).accepted ?? 0) > ticket) {
          throw new ConflictError('replaced by a later subscribe on this socket before its replay was over');
        }
      };
      if (message.runId) {
        await this.runs.get(user, message.runId);
      }
      await assertSinceIssued(this.store, user.tenant, message.since, 'subscribe message');
      // Accepted: from here on it replaces any earlier subscribe, unless a later one was accepted first.
      overtaken();
      data(socket).accepted = ticket;
      const current = await this.store.events.lastSeq(user.tenant);
      overtaken();
      if (!socket.connected) {
        // Gone meanwhile: following its tenant now would outlast every socket of it here.
        return new ConflictError('the socket disconnected before its subscribe was done').toBody();
      }
      this.feed.track(user.tenant, current);
      subscription = {
        ...(message.runId ? { runId: message.runId } : {}),
        ...(user.role === 'member' ? { owner: user.sub } : {}),
        ...(message.types ? { types: new Set(message.types) } : {}),
        lastSeq: message.since ?? current,
        buffer: [],
      };
      data(socket).subscription = subscription;
      let truncated = false;
      do {
        // A slow client's replay can outlast what the buffer holds of a busy tenant: then read on from the stream.
        subscription.overflowed = false;
        truncated = (await this.replay(socket, user.tenant, subscription, overtaken)) || truncated;
      } while (subscription.overflowed);
      const buffered = subscription.buffer ?? [];
      subscription.buffer = null;
      buffered.forEach((event) => this.deliver(socket, subscription!, event));
      return { ok: true, lastSeq: subscription.lastSeq, truncated };
    } catch (error) {
      if (subscription && data(socket).subscription === subscription) {
        data(socket).subscription = undefined;
      }
      return toErrorReply(error).body;
    }
  }

  @SubscribeMessage(SOCKET.answer)
  async answer(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<Ack<{ interaction: Interaction }>> {
    return this.reply('answer', async () => {
      const message = parseOrThrow(AnswerMessageSchema, body, 'answer message');
      return { interaction: await this.interactions.answer(data(socket).user, message.interactionId, parseAnswerBody(AnswerBodySchema, message.answer)) };
    });
  }

  @SubscribeMessage(SOCKET.message)
  async message(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<Ack<{ messageId: string; pending: number; replayed?: true }>> {
    return this.reply('message', async () => {
      const message = parseOrThrow(RunMessageSchema, body, 'message');
      const { messageId, pending, replayed } = await this.runs.message(data(socket).user, message.runId, { text: message.text }, message.idempotencyKey);
      return { messageId, pending, ...(replayed ? { replayed: true as const } : {}) };
    });
  }

  @SubscribeMessage(SOCKET.stop)
  async stop(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<Ack<{ run: Run }>> {
    return this.reply('stop', async () => {
      return { run: await this.runs.stop(data(socket).user, parseOrThrow(StopMessageSchema, body, 'stop message').runId) };
    });
  }

  @SubscribeMessage(SOCKET.claim)
  async claim(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<Ack<{ interaction: Interaction }>> {
    return this.reply('claim', async () => {
      // The role first, as over HTTP: a member's claim is a 403 whatever its message holds.
      requireClaimer(data(socket).user);
      const message = parseOrThrow(ClaimMessageSchema, body, 'claim message');
      return { interaction: await this.interactions.claim(data(socket).user, message.interactionId, message.release) };
    });
  }

  @SubscribeMessage(SOCKET.approvals)
  async approvals(@ConnectedSocket() socket: Socket, @MessageBody() body: unknown): Promise<Ack<ApprovalPage>> {
    return this.reply('approvals', async () => {
      const filter = parseOrThrow(ApprovalsMessageSchema, body ?? {}, 'approvals message');
      return this.interactions.listApprovals(data(socket).user, filter);
    }, 'read');
  }

  private reply<T extends object>(what: string, work: () => Promise<T>, kind: 'read' | 'write' = 'write'): Promise<Ack<T>> {
    return socketReply(this.store.ctx.redis, this.logger, what, work, kind);
  }

  /**
   * `overtaken` throws when a later subscribe came: this replay stops there. True when events it
   * should have sent were trimmed from the stream before it could read them.
   */
  private async replay(socket: Socket, tenant: string, subscription: Subscription, overtaken: () => void): Promise<boolean> {
    let truncated = false;
    for (;;) {
      const page = subscription.runId
        ? await this.store.events.replayRun(tenant, subscription.runId, subscription.lastSeq, REPLAY_PAGE)
        : subscription.owner
          ? await this.store.events.replayOwner(tenant, subscription.owner, subscription.lastSeq, REPLAY_PAGE)
          : await this.store.events.replayTenant(tenant, subscription.lastSeq, REPLAY_PAGE);
      overtaken();
      truncated ||= page.truncated;
      for (const event of page.events) {
        if (matches(subscription, event)) {
          socket.emit(SOCKET.event, event);
        }
        subscription.lastSeq = event.seq;
      }
      if (page.events.length < REPLAY_PAGE) {
        return truncated;
      }
      // The next page once this one is written out: a client that reads slowly holds its replay back,
      // instead of the gateway holding the whole stream in memory for it.
      await writtenOut(socket);
      if (!socket.connected) {
        throw new ConflictError('the socket disconnected during its replay');
      }
    }
  }

  private fanOut(event: ParleyEvent): void {
    const to: Socket[] = [];
    for (const socket of this.sockets.get(event.tenant) ?? []) {
      const subscription = data(socket).subscription;
      if (subscription && admits(subscription, event) && !this.closedForNotReading(socket)) {
        to.push(socket);
      }
    }
    // One broadcast to the sockets' own rooms encodes the packet once, not once per socket; to one
    // socket, an emit costs less (no broadcast operator, room set or adapter pass).
    if (to.length > 1) {
      this.namespace.to(to.map((socket) => socket.id)).emit(SOCKET.event, event);
    } else {
      to[0]?.emit(SOCKET.event, event);
    }
  }

  private closedForNotReading(socket: Socket): boolean {
    if (!closeIfBackedUp(socket)) {
      return false;
    }
    this.logger.warn({ msg: 'closed a socket that stopped reading its events', tenant: data(socket).user.tenant, sub: data(socket).user.sub });
    return true;
  }

  private deliver(socket: Socket, subscription: Subscription, event: ParleyEvent): void {
    if (admits(subscription, event) && !this.closedForNotReading(socket)) {
      socket.emit(SOCKET.event, event);
    }
  }
}

function data(socket: Socket): SocketData {
  return socket.data as SocketData;
}
