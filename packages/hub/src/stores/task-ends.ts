import { z } from 'zod';
import type { KV, KvEntry } from '@nats-io/kv';
import { parseJson } from '../base/parse-json.js';
import { fencedKv } from '../nats/fenced-kv.js';

/** The key prefix of task ends waiting for the home partition's owner: `ended.<task_id>` in the tasks bucket. */
export const TASK_END_PREFIX = 'ended.';

/** A task end one partition asks the home partition's owner to write. */
const TaskEndSchema = z.strictObject({
  state: z.literal('cancelled'),
  reason: z.string().max(1024),
  channel_id: z.string().max(128),
  envelope_id: z.string().max(128),
});
export type TaskEnd = z.infer<typeof TaskEndSchema>;

/**
 * Task ends a hub that does not write the tasks leaves for the one that does (a partitioned prefix's tasks are written
 * by the home partition's owner alone): an owner's `ag2.task.cancelled` admitted in a channel of another partition
 * puts `ended.<task_id>` in the tasks bucket, under that partition's lease; every hub follows the bucket
 * (`HomeReplica`) and knows the pending ends; the home partition's owner ends each task and then removes its key,
 * under the home lease. A key written twice (a resent post) is the same end.
 */
export class TaskEnds {
  readonly #pending = new Map<string, TaskEnd>();

  constructor(private readonly kv: KV) {}

  /** The ends waiting for the home partition's owner, by task id. */
  pending(): ReadonlyMap<string, TaskEnd> {
    return this.#pending;
  }

  /** Asks for `taskId`'s end, writing under `mayWrite` (the lease of the partition that admitted it). */
  async request(taskId: string, end: TaskEnd, mayWrite: () => boolean): Promise<void> {
    await fencedKv(this.kv, mayWrite).put(`${TASK_END_PREFIX}${taskId}`, JSON.stringify(end));
    this.#pending.set(taskId, end);
  }

  /** Removes `taskId`'s request once its end is written, under `mayWrite` (the home lease). */
  async done(taskId: string, mayWrite: () => boolean): Promise<void> {
    await fencedKv(this.kv, mayWrite).purge(`${TASK_END_PREFIX}${taskId}`);
    this.#pending.delete(taskId);
  }

  /** Applies a change of the tasks bucket seen by a watch or a scan (keys that are not ends are ignored). */
  apply(entry: Pick<KvEntry, 'key' | 'operation'> & { string(): string }): void {
    if (!entry.key.startsWith(TASK_END_PREFIX)) return;
    const taskId = entry.key.slice(TASK_END_PREFIX.length);
    if (entry.operation !== 'PUT') {
      this.#pending.delete(taskId);
      return;
    }
    const parsed = parseJson(entry.string(), TaskEndSchema);
    if (parsed.ok) this.#pending.set(taskId, parsed.value);
  }

  /** Reads every pending end from the bucket (at a hub's start). */
  async load(): Promise<void> {
    for await (const key of await this.kv.keys(`${TASK_END_PREFIX}>`)) {
      const entry = await this.kv.get(key);
      if (entry !== null) this.apply(entry);
    }
  }
}
