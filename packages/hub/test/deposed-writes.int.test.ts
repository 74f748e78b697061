/**
 * A deposed hub cannot write any store: every write of the WAL, the agents, channel metadata, tasks, turn locks,
 * snapshots and history retention is refused without the writer lease, and what NATS holds stays as it was (read
 * through a connection of its own: no key, no message, no revision). Two ways to be without the lease: a hub
 * whose lease was never acquired (a standby), and a holder deposed by a take-over (its lease suspended, another hub's
 * lease takes the key, the former holder's renewal finds it lost). Each time the holder's same writes go through,
 * so a refusal is the lease's, not the records'.
 */
import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { createManualClock, type ManualClock } from '@ag2net/hub';
import {
  Ag2netError,
  ChannelMetadataSchema,
  ChannelState,
  CloseReason,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  PassportSchema,
  ResumeSchema,
  TaskMetadataSchema,
  createEnvelope,
  hubNames,
  newId,
  type ChannelMetadata,
  type Envelope,
  type HubNames,
  type TaskMetadata,
} from '@ag2net/protocol';
import { defaultRule } from '@ag2net/protocol/internal';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { assembleHub, type PartitionView } from '../src/assemble-hub.js';
import { isoAt } from '../src/base/clock.js';
import { appendLocked, appendOnce } from '../src/operations/append.js';
import { applyAppended, newRuntime, type ChannelRuntime } from '../src/stores/channel-runtime.js';
import type { Quarantine } from '../src/base/quarantined-record.js';
import type { AgentRecord } from '../src/stores/registry.js';
import { expireHistories } from '../src/operations/retention.js';
import { createExpectationRegistry } from '../src/governance/expectation-registry.js';
import type { HubEnv } from '../src/partition/hub-parts.js';
import { provision } from '../src/nats/provision.js';
import { withDefaults } from '../src/options.js';
import type { PartitionPick } from '../src/partition/partition.js';
import { turnLockTable } from '../src/operations/hub-turn-locks.js';

const nats = natsPerFile();

/** The manual clock of both hubs starts here; nothing in these tests moves it. */
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const HOUR_MS = 3_600_000;
/** Long enough that no lease lapses by time while a test runs: only a take-over deposes. */
const LEASE_TTL_MS = 60_000;
/** A turn lock that stays alive at `T0`. */
const TURN_LOCK_TTL_MS = 60_000;

/** How every write of a hub without the writer lease is answered (`leaseLapsed()`). */
const LAPSED = {
  refused: {
    name: 'UnavailableError',
    code: 'unavailable',
    message: 'this hub no longer holds the writer lease; retry',
    retryable: true,
  },
} as const;

/** How a write ended: the value it resolved with, or the hub error it threw. */
type Outcome =
  | { readonly resolved: unknown }
  | { readonly refused: { name: string; code: string; message: string; retryable: boolean } };

async function outcome(write: Promise<unknown>): Promise<Outcome> {
  try {
    return { resolved: await write };
  } catch (err) {
    if (!(err instanceof Ag2netError)) throw err;
    return { refused: { name: err.name, code: err.code, message: err.message, retryable: err.retryable } };
  }
}

/** One hub's parts with its runtimes of the two seeded channels. */
interface Side {
  readonly ctx: PartitionView;
  /** A pending conversation with one invite in its log. */
  readonly open: ChannelRuntime;
  /** A conversation closed an hour before `T0` (one invite in its log, a final snapshot): due for history removal. */
  readonly ended: ChannelRuntime;
}

/** The records the seeded hub wrote, and the ones the writes under test use. */
interface Cast {
  readonly alice: AgentRecord;
  readonly bob: AgentRecord;
  /** Not registered. */
  readonly carol: AgentRecord;
  /** The invite of bob in the open channel. */
  readonly invite: Envelope;
  /** A task of bob's in the open channel. */
  readonly task: TaskMetadata;
  /** Not stored. */
  readonly newTask: TaskMetadata;
  /** Not stored. */
  readonly newChannel: ChannelMetadata;
}

/**
 * Two hubs on one fresh prefix, each with its own connection: `first` took the lease and wrote one record of every
 * store, `second` loaded what `first` wrote and never campaigned. `state()` reads every store through a third one.
 */
interface Stage extends AsyncDisposable {
  readonly first: Side;
  readonly second: Side;
  readonly cast: Cast;
  readonly clock: ManualClock;
  /** What NATS holds of every store the hub writes, per stream: counts, last sequence, each subject's last message. */
  state(): Promise<StoreState>;
  /** `second` takes the lease over from `first`, as a standby does from a holder whose connection went down. */
  depose(): Promise<void>;
}

/** Per stream, keyed by the store's name, in `streamsOf` order. */
type StoreState = ReadonlyMap<StoreName, StreamState>;

interface StreamState {
  readonly messages: number;
  readonly lastSeq: number;
  /** Subject → how many messages it holds, the sequence of its last one and that one's `KV-Operation` header. */
  readonly subjects: Record<string, { count: number; lastSeq: number; operation: string }>;
}

type StoreName = 'wal' | 'audit' | 'inbox' | 'agents' | 'channels' | 'tasks' | 'cursors' | 'snapshots' | 'turnLocks';

/** The stream of each store (a KV bucket's is `KV_<bucket>`), in the order `changed` lists them. */
function streamsOf(names: HubNames): ReadonlyMap<StoreName, string> {
  return new Map<StoreName, string>([
    ['wal', names.walStream],
    ['audit', names.auditStream],
    ['inbox', names.inboxStream],
    ['agents', `KV_${names.agentsBucket}`],
    ['channels', `KV_${names.channelsBucket}`],
    ['tasks', `KV_${names.tasksBucket}`],
    ['cursors', `KV_${names.cursorsBucket}`],
    ['snapshots', `KV_${names.snapshotsBucket}`],
    ['turnLocks', `KV_${names.turnLocksBucket}`],
  ]);
}

async function streamState(jsm: JetStreamManager, stream: string): Promise<StreamState> {
  const info = await jsm.streams.info(stream, { subjects_filter: '>' });
  const subjects: StreamState['subjects'] = {};
  for (const [subject, count] of Object.entries(info.state.subjects ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const last = await jsm.streams.getMessage(stream, { last_by_subj: subject });
    subjects[subject] = { count, lastSeq: last?.seq ?? 0, operation: last?.header.get('KV-Operation') ?? '' };
  }
  return { messages: info.state.messages, lastSeq: info.state.last_seq, subjects };
}

/** The stores whose state differs between `before` and `after`, in `streamsOf` order. */
function changed(before: StoreState, after: StoreState): StoreName[] {
  return [...after.keys()].filter((store) => JSON.stringify(before.get(store)) !== JSON.stringify(after.get(store)));
}

/** Loading what the seeded hub wrote quarantines nothing. */
const nothingQuarantined: Quarantine = (record) => {
  throw new Error(`quarantined ${record.source} ${record.key}: ${record.reason}`);
};

function agentRecord(name: string, at: string): AgentRecord {
  const agentId = newId();
  return {
    passport: PassportSchema.parse({ name, agent_id: agentId, created_at: at }),
    resume: ResumeSchema.parse({ summary: `${name} answers` }),
    rule: defaultRule(),
    skill: `# ${name}`,
    publicKey: null,
    credentials: null,
  };
}

/** A new pending conversation of `creator` with `invitee`, as `createChannel` stores it. */
function conversationOf(
  ctx: Pick<HubEnv, 'adapters' | 'names'>,
  creator: AgentRecord,
  invitee: AgentRecord,
  at: string,
): ChannelMetadata {
  const creatorId = creator.passport.agent_id ?? '';
  const inviteeId = invitee.passport.agent_id ?? '';
  return ChannelMetadataSchema.parse({
    channel_id: idInPartition0(ctx.names),
    manifest: ctx.adapters.get(CONVERSATION_TYPE, 1).manifest,
    creator_id: creatorId,
    participants: [
      { agent_id: creatorId, role: 'initiator', order: 0, joined_at: at },
      { agent_id: inviteeId, role: 'respondent', order: 1, joined_at: at },
    ],
    state: ChannelState.Pending,
    created_at: at,
    pending_acks: [inviteeId],
  });
}

/** The hub's invite of the channel's only invitee. */
function inviteOf(metadata: ChannelMetadata): Envelope {
  const invitee = metadata.pending_acks[0] ?? '';
  return createEnvelope({
    channel_id: metadata.channel_id,
    sender_id: metadata.creator_id,
    audience: [invitee],
    event_type: EV_CHANNEL_INVITE,
    event_data: {
      channel_id: metadata.channel_id,
      manifest_type: metadata.manifest.type,
      manifest_version: metadata.manifest.version,
      creator_id: metadata.creator_id,
      knobs: metadata.knobs,
      labels: metadata.labels,
    },
  });
}

/** A fresh runtime in `ctx` of a channel created as `created`, folded through the log `rt` folded, as hydrate builds it. */
async function mirror(
  ctx: Pick<HubEnv, 'adapters'> & PartitionPick<'writer' | 'channels'>,
  rt: ChannelRuntime,
  created: ChannelMetadata,
): Promise<ChannelRuntime> {
  const adapter = ctx.adapters.get(created.manifest.type, created.manifest.version);
  const copy = newRuntime(created, adapter, adapter.initialState(created));
  for (const streamSeq of rt.streamSeqs) {
    const stored = await ctx.partition.writer.at(streamSeq);
    if (stored === null) throw new Error(`no envelope at stream sequence ${streamSeq}`);
    applyAppended(copy, stored.envelope, streamSeq);
  }
  copy.metadata = rt.metadata;
  ctx.partition.channels.set(copy);
  return copy;
}

/** One hub's parts on `names`, on a connection of its own, never started: no election, delivery or sweeps. */
async function unstartedHub(names: HubNames, clock: ManualClock, hubId: string): Promise<PartitionView> {
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  const resources = await provision({ nc, jsm, names }, { replicas: 1, leaseTtlMs: LEASE_TTL_MS });
  const opts = withDefaults({
    connection: nc,
    prefix: names.prefix,
    hubId,
    clock,
    leaseTtlMs: LEASE_TTL_MS,
    sweepIntervalMs: 0,
    // Every ended channel's history is due at once, so that only the lease stands in a removal's way.
    retainClosedMs: 0,
  });
  const ctx = assembleHub({
    opts,
    names,
    nc,
    jsm,
    resources,
    issuer: null,
    expectations: createExpectationRegistry([], []),
  }).home;
  // No delivery runs here: count everything appended as fanned out, which a history removal waits for.
  ctx.partition.deliveredThrough = Number.MAX_SAFE_INTEGER;
  return ctx;
}

/** A channel id in partition 0, the one whose view the stages write through (every id, with one partition). */
function idInPartition0(names: HubNames): string {
  for (;;) {
    const id = newId();
    if (names.partitionOf(id) === 0) return id;
  }
}

/**
 * `first` takes the lease and writes one record of every store; `second` loads them. With several partitions both
 * write through partition 0, whose lease fences its channels and the home stores alike.
 */
async function stage(partitions: number): Promise<Stage> {
  const names = hubNames(uniqueName('deposed'), partitions);
  const clock = createManualClock(T0);
  const first = await unstartedHub(names, clock, 'hub-a');
  const second = await unstartedHub(names, clock, 'hub-b');
  const observer = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(observer);
  const streams = streamsOf(names);

  expect(await first.partition.lease.tryAcquire()).toBe(1);
  first.partition.epoch = 1;
  const now = isoAt(T0);
  const alice = agentRecord('alice', now);
  const bob = agentRecord('bob', now);
  const carol = agentRecord('carol', now);
  await first.registry.add(alice);
  await first.registry.add(bob);

  const adapter = first.adapters.get(CONVERSATION_TYPE, 1);
  const openCreated = conversationOf(first, alice, bob, now);
  await first.partition.channels.persist(openCreated);
  const open = newRuntime(openCreated, adapter, adapter.initialState(openCreated));
  first.partition.channels.set(open);
  const invite = await appendLocked(first, open, { draft: inviteOf(openCreated) });

  const endedCreated = conversationOf(first, alice, bob, isoAt(T0 - 2 * HOUR_MS));
  const ended = newRuntime(endedCreated, adapter, adapter.initialState(endedCreated));
  await appendLocked(first, ended, { draft: inviteOf(endedCreated) });
  const endedMetadata: ChannelMetadata = {
    ...endedCreated,
    state: ChannelState.Closed,
    closed_at: isoAt(T0 - HOUR_MS),
    close_reason: CloseReason.ExplicitClose,
  };
  ended.metadata = endedMetadata;
  await first.partition.channels.persist(endedMetadata);
  first.partition.channels.set(ended);
  expect(await first.partition.snapshots.write(ended)).toBe(true);

  const task = TaskMetadataSchema.parse({
    task_id: newId(),
    owner_id: bob.passport.agent_id,
    created_at: now,
    channel_id: openCreated.channel_id,
  });
  await first.tasks.put(task);
  const acquired = await turnLockTable(first).acquire(bob.passport.agent_id ?? '', {
    channel_id: openCreated.channel_id,
    holder: 'replica-a',
    ttl_ms: TURN_LOCK_TTL_MS,
  });
  expect(acquired).toBe(true);

  // The standby knows what the holder wrote, as after hydrate.
  await second.registry.load(nothingQuarantined);
  await second.tasks.load(nothingQuarantined);
  const secondSide: Side = {
    ctx: second,
    open: await mirror(second, open, openCreated),
    ended: await mirror(second, ended, endedCreated),
  };

  const cast: Cast = {
    alice,
    bob,
    carol,
    invite,
    task,
    newTask: TaskMetadataSchema.parse({
      task_id: newId(),
      owner_id: alice.passport.agent_id,
      created_at: now,
      channel_id: openCreated.channel_id,
    }),
    newChannel: conversationOf(first, bob, alice, now),
  };
  return {
    first: { ctx: first, open, ended },
    second: secondSide,
    cast,
    clock,
    async state() {
      const out = new Map<StoreName, StreamState>();
      for (const [store, stream] of streams) out.set(store, await streamState(jsm, stream));
      return out;
    },
    async depose() {
      expect(await second.partition.lease.tryAcquire()).toBeNull();
      const holder = second.partition.lease.observedHolder();
      if (holder === null) throw new Error('the standby saw no holder');
      expect(holder).toEqual({ hubId: 'hub-a', revision: 1 });
      // The holder's connection went down: it serves nothing until a renewal, and the standby takes the key over.
      first.partition.lease.suspend();
      expect(await second.partition.lease.takeOver(holder)).toBe(2);
      second.partition.epoch = 2;
      expect(await first.partition.lease.renew()).toBe('lost');
      expect([
        first.partition.lease.holds(),
        first.partition.lease.suspended(),
        second.partition.lease.holds(),
      ]).toEqual([false, false, true]);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all([first.nc.close(), second.nc.close(), observer.close()]);
    },
  };
}

/** One write of a store, made by either hub, and how it ends without the lease and with it. */
interface Write {
  readonly what: string;
  readonly run: (side: Side, cast: Cast, clock: ManualClock) => Promise<unknown>;
  readonly deposed: Outcome;
  readonly holder: (cast: Cast) => Outcome;
}

/** A store: every write of it the hub makes, and which streams the holder's writes change. */
interface Store {
  readonly store: string;
  readonly writes: readonly Write[];
  readonly writtenBy: readonly StoreName[];
}

const idOf = (record: AgentRecord): string => record.passport.agent_id ?? '';

const STORES: readonly Store[] = [
  {
    store: 'the WAL',
    writes: [
      {
        what: 'an append through admission (appendOnce)',
        run: async ({ ctx, open }, { bob, invite }) => {
          const draft = createEnvelope({
            channel_id: open.metadata.channel_id,
            sender_id: idOf(bob),
            event_type: EV_CHANNEL_INVITE_ACK,
            event_data: { channel_id: open.metadata.channel_id },
            causation_id: invite.envelope_id,
          });
          const { envelope, fresh } = await appendOnce(ctx, open, { draft });
          return { sequence: envelope.sequence, fresh };
        },
        deposed: LAPSED,
        holder: () => ({ resolved: { sequence: 2, fresh: true } }),
      },
    ],
    writtenBy: ['wal'],
  },
  {
    store: 'the agents registry',
    writes: [
      {
        what: 'add',
        run: ({ ctx }, { carol }) => ctx.registry.add(carol),
        deposed: LAPSED,
        holder: ({ carol }) => ({ resolved: carol }),
      },
      {
        what: 'remove',
        run: ({ ctx }, { alice }) => ctx.registry.remove(idOf(alice)),
        deposed: LAPSED,
        holder: ({ alice }) => ({ resolved: alice }),
      },
      {
        what: 'setResume',
        run: ({ ctx }, { bob }) => ctx.registry.setResume(idOf(bob), ResumeSchema.parse({ summary: 'bob reviews' })),
        deposed: LAPSED,
        holder: () => ({ resolved: ResumeSchema.parse({ summary: 'bob reviews' }) }),
      },
      {
        what: 'setRule',
        run: ({ ctx }, { bob }) => ctx.registry.setRule(idOf(bob), defaultRule()),
        deposed: LAPSED,
        holder: () => ({ resolved: defaultRule() }),
      },
      {
        what: 'setSkill',
        run: ({ ctx }, { bob }) => ctx.registry.setSkill(idOf(bob), null),
        deposed: LAPSED,
        holder: () => ({ resolved: undefined }),
      },
    ],
    writtenBy: ['agents'],
  },
  {
    store: 'channel metadata',
    writes: [
      {
        what: 'persist',
        run: ({ ctx }, { newChannel }) => ctx.partition.channels.persist(newChannel),
        deposed: LAPSED,
        holder: () => ({ resolved: undefined }),
      },
      {
        what: 'expire',
        run: ({ ctx, ended }) => ctx.partition.channels.expire(ended, isoAt(T0)),
        deposed: LAPSED,
        holder: () => ({ resolved: undefined }),
      },
    ],
    writtenBy: ['channels'],
  },
  {
    store: 'tasks',
    writes: [
      {
        what: 'put',
        run: ({ ctx }, { newTask }) => ctx.tasks.put(newTask),
        deposed: LAPSED,
        holder: ({ newTask }) => ({ resolved: newTask }),
      },
      {
        what: 'writeCheckpoint',
        run: ({ ctx }, { task }) => ctx.tasks.writeCheckpoint(task.task_id, { step: 1 }),
        deposed: LAPSED,
        holder: () => ({ resolved: undefined }),
      },
      {
        what: 'markObserved',
        run: ({ ctx }, { task }) => ctx.tasks.markObserved(task.task_id),
        deposed: LAPSED,
        holder: () => ({ resolved: true }),
      },
      {
        what: 'claimPeerCancel',
        run: ({ ctx }, { task, alice, invite }) =>
          ctx.tasks.claimPeerCancel(task.task_id, idOf(alice), invite.envelope_id),
        deposed: LAPSED,
        holder: () => ({ resolved: true }),
      },
    ],
    writtenBy: ['tasks'],
  },
  {
    store: 'turn locks',
    writes: [
      {
        what: 'acquire (a free lock)',
        run: ({ ctx, open }, { alice }) =>
          turnLockTable(ctx).acquire(idOf(alice), {
            channel_id: open.metadata.channel_id,
            holder: 'replica-c',
            ttl_ms: TURN_LOCK_TTL_MS,
          }),
        deposed: LAPSED,
        holder: () => ({ resolved: true }),
      },
      {
        what: 'renew (a live lock)',
        run: ({ ctx, open }, { bob }) =>
          turnLockTable(ctx).renew(idOf(bob), { channel_id: open.metadata.channel_id, holder: 'replica-a' }),
        deposed: LAPSED,
        holder: () => ({ resolved: true }),
      },
      {
        what: 'release (a live lock)',
        run: ({ ctx, open }, { bob }) =>
          turnLockTable(ctx).release(idOf(bob), { channel_id: open.metadata.channel_id, holder: 'replica-a' }),
        deposed: LAPSED,
        holder: () => ({ resolved: undefined }),
      },
    ],
    writtenBy: ['turnLocks'],
  },
  {
    store: 'snapshots',
    writes: [
      {
        // `write` never throws (a snapshot is an optimization): without the lease it answers false.
        what: 'write',
        run: ({ ctx, open }) => ctx.partition.snapshots.write(open),
        deposed: { resolved: false },
        holder: () => ({ resolved: true }),
      },
      {
        what: 'remove',
        run: ({ ctx, ended }) => ctx.partition.snapshots.remove(ended.metadata.channel_id),
        deposed: LAPSED,
        holder: () => ({ resolved: undefined }),
      },
    ],
    writtenBy: ['snapshots'],
  },
  {
    store: 'history retention',
    writes: [
      {
        // A sweep's share: without the lease it removes nothing and reports nothing (the next holder's sweep does it).
        what: 'expireHistories (snapshots, WAL purge, audit record, tombstone)',
        run: ({ ctx }, _cast, clock) => expireHistories(ctx, clock.now()),
        deposed: { resolved: undefined },
        holder: () => ({ resolved: undefined }),
      },
    ],
    writtenBy: ['wal', 'audit', 'channels', 'snapshots'],
  },
];

/**
 * Every write of `store` by `deposed` is refused and leaves every store as it was; then the same writes by `holder`
 * go through and change the store's streams, and only those.
 */
async function refusedThenAccepted(s: Stage, store: Store, deposed: Side, holder: Side): Promise<void> {
  expect(deposed.ctx.partition.lease.holds()).toBe(false);
  for (const write of store.writes) {
    const before = await s.state();
    // Soft: one write found unfenced still lets the others (and what it changed) be reported.
    expect
      .soft(await outcome(write.run(deposed, s.cast, s.clock)), `${write.what} without the lease`)
      .toEqual(write.deposed);
    expect.soft(await s.state(), `what NATS holds after ${write.what} without the lease`).toEqual(before);
  }
  expect(holder.ctx.partition.lease.holds()).toBe(true);
  const before = await s.state();
  for (const write of store.writes) {
    expect(await outcome(write.run(holder, s.cast, s.clock)), `${write.what} with the lease`).toEqual(
      write.holder(s.cast),
    );
  }
  expect(changed(before, await s.state())).toEqual(store.writtenBy);
}

for (const partitions of [1, 4]) {
  const of = partitions === 1 ? '' : ` (${partitions} partitions)`;

  describe(`a hub whose lease was never acquired${of}`, () => {
    for (const store of STORES) {
      it(`cannot write ${store.store}: refused, and nothing on NATS changes`, async () => {
        await using s = await stage(partitions);
        await refusedThenAccepted(s, store, s.second, s.first);
      });
    }
  });

  describe(`a deposed hub (its lease taken over by another hub)${of}`, () => {
    for (const store of STORES) {
      it(`cannot write ${store.store}: refused, and nothing on NATS changes`, async () => {
        await using s = await stage(partitions);
        await s.depose();
        await refusedThenAccepted(s, store, s.first, s.second);
      });
    }
  });
}
