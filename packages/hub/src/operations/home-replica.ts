import { KeyedSerial } from '@ag2net/protocol/internal';
import { KvWatchInclude, type KV, type KvEntry } from '@nats-io/kv';
import { pause } from '@ag2net/protocol/internal';
import { lastValues } from '../base/kv-scan.js';
import type { HomeStores, HubEnv } from '../partition/hub-parts.js';
import { QuarantineLog, type QuarantineDeps } from './quarantine.js';

/** What an agent or task id in a key of the agents or tasks bucket looks like. */
const KEY_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/** What the home replica uses: the agents and tasks buckets, the stores it keeps, and the quarantine. */
export type HomeReplicaDeps = QuarantineDeps &
  Pick<HubEnv, 'resources' | 'logger' | 'js' | 'jsm' | 'names'> &
  Pick<HomeStores, 'registry' | 'tasks' | 'channelIndex' | 'taskEnds'>;

/** What a bucket's watch yields and how it stops. */
interface Watch {
  readonly done: Promise<void>;
  stop(): void;
}

/**
 * The agents and tasks as every hub of a partitioned deployment sees them, and the index of every channel
 * (`ChannelIndex`). Agents and tasks are written by the home partition's owner alone; every hub reads them on every
 * admission, so each keeps a copy: loaded once at start, then followed with a watch of the buckets from the moment
 * before the load began (so that no write between the two is missed).
 * A change to any key of an agent (`<agent_id>.<part>`) reads that agent again whole, and a change to a task's record
 * (`meta.<task_id>`) reads the task again; reads of one record take turns, so the last read is of the last write.
 * `ensureAgents` reads agents through to KV when the copy does not know them yet (an agent registered a moment ago
 * on the home partition's owner).
 */
export class HomeReplica {
  readonly #quarantine: QuarantineLog;
  readonly #reads = new KeyedSerial();
  #watches: Watch[] = [];
  #stop = new AbortController();

  constructor(private readonly ctx: HomeReplicaDeps) {
    this.#quarantine = new QuarantineLog(ctx);
  }

  /** Starts following the buckets, then loads them. Resolves once the copy holds what KV held at the start. */
  async start(): Promise<void> {
    this.#stop = new AbortController();
    const { resources } = this.ctx;
    this.#watches = [
      await this.#follow(resources.agents, (entry) => {
        const dot = entry.key.lastIndexOf('.');
        return dot > 0 ? this.#refreshAgent(entry.key.slice(0, dot)) : Promise.resolve();
      }),
      await this.#follow(resources.tasks, (entry) => {
        this.ctx.taskEnds.apply(entry);
        return entry.key.startsWith('meta.') ? this.#refreshTask(entry.key.slice('meta.'.length)) : Promise.resolve();
      }),
      await this.#follow(resources.channels, (entry) => {
        this.ctx.channelIndex.apply(entry.key, entry.revision, entry.operation === 'PUT' ? entry.string() : null);
        return Promise.resolve();
      }),
    ];
    await Promise.all([
      this.ctx.registry.load(this.#quarantine.note),
      this.ctx.tasks.load(this.#quarantine.note),
      this.ctx.taskEnds.load(),
      this.#indexChannels(),
    ]);
    await this.#quarantine.flush();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    const watches = this.#watches.splice(0);
    for (const watch of watches) watch.stop();
    await Promise.all(watches.map((w) => w.done));
    await this.#reads.idle();
  }

  /** Reads through to KV each agent and task the copy does not know. */
  async ensure(refs: { readonly agents: readonly string[]; readonly tasks: readonly string[] }): Promise<void> {
    // Only what can be an id (a KV key token): the operator, names and garbage have no record to read.
    const agents = refs.agents.filter((id) => KEY_TOKEN.test(id) && this.ctx.registry.get(id) === undefined);
    const tasks = refs.tasks.filter((id) => KEY_TOKEN.test(id) && this.ctx.tasks.get(id) === undefined);
    await Promise.all([...agents.map((id) => this.#refreshAgent(id)), ...tasks.map((id) => this.#refreshTask(id))]);
  }

  /**
   * Reads every record again without emptying the copy first (an admission meanwhile still finds what it found):
   * each agent and task KV holds, each agent the copy holds that KV no longer does, and the channel index. After a
   * watch had to be started again, so that nothing written while none ran is missed.
   */
  async #resync(): Promise<void> {
    const { registry, resources } = this.ctx;
    const agentIds = new Set(registry.all().map((r) => r.passport.agent_id ?? ''));
    for await (const key of await resources.agents.keys()) {
      const dot = key.lastIndexOf('.');
      if (dot > 0) agentIds.add(key.slice(0, dot));
    }
    agentIds.delete('');
    await Promise.all([...agentIds].map((id) => this.#refreshAgent(id)));
    const taskIds: string[] = [];
    for await (const key of await resources.tasks.keys('meta.>')) taskIds.push(key.slice('meta.'.length));
    await Promise.all(taskIds.map((id) => this.#refreshTask(id)));
    await this.ctx.taskEnds.load();
    await this.#indexChannels();
    await this.#quarantine.flush();
  }

  async #indexChannels(): Promise<void> {
    const { js, jsm, names, channelIndex } = this.ctx;
    for await (const { key, revision, value } of lastValues({ js, jsm, bucket: names.channelsBucket })) {
      channelIndex.apply(key, revision, value);
    }
  }

  #refreshAgent(agentId: string): Promise<void> {
    return this.#reads.run(`agent\u0000${agentId}`, () => this.ctx.registry.refresh(agentId, this.#quarantine.note));
  }

  #refreshTask(taskId: string): Promise<void> {
    return this.#reads.run(`task\u0000${taskId}`, () => this.ctx.tasks.refresh(taskId, this.#quarantine.note));
  }

  /**
   * Watches every key of `kv` from now on and hands each change to `onChange`. A watch that ends without `stop()` (its
   * consumer lost) is started again after a pause, and then every record is read again (`#resync`): a copy that
   * silently stopped following could keep serving an identity the operator revoked.
   */
  async #follow(kv: KV, onChange: (entry: KvEntry) => Promise<void>): Promise<Watch> {
    const signal = this.#stop.signal;
    const watch = (): ReturnType<KV['watch']> => kv.watch({ key: '>', include: KvWatchInclude.UpdatesOnly });
    // `null` between a watch that ended and the next one that started and resynced: an ended watch is never read again.
    let iterator: Awaited<ReturnType<KV['watch']>> | null = await watch();
    const done = (async (): Promise<void> => {
      while (!signal.aborted) {
        if (iterator !== null) {
          for await (const entry of iterator as AsyncIterable<KvEntry>) {
            void onChange(entry).catch((err: unknown) =>
              this.ctx.logger.warn({ err, key: entry.key }, 'reading a changed home record failed'),
            );
          }
          if (signal.aborted) break;
          this.ctx.logger.error({}, 'the watch of the home records ended; watching again and reading every record');
          iterator = null;
        }
        if (!(await pause(RESTART_MS, signal))) break;
        const next = await watch().catch((err: unknown) => {
          this.ctx.logger.warn({ err }, 'watching the home records again failed; retrying');
          return null;
        });
        if (next === null) continue;
        try {
          await this.#resync();
          iterator = next;
          // Stopped meanwhile: `stop()` found no watch to end.
          if (signal.aborted) next.stop();
        } catch (err) {
          next.stop();
          this.ctx.logger.warn({ err }, 'reading every home record again failed; retrying');
        }
      }
    })();
    return { done, stop: () => iterator?.stop() };
  }
}

/** How long a home replica waits before it watches again a bucket whose watch ended, ms. */
const RESTART_MS = 1_000;
