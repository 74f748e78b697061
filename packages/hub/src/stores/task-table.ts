import { NotFoundError, TaskMetadataSchema, isTerminalTaskState, type TaskMetadata } from '@ag2net/protocol';
import { JetStreamApiError } from '@nats-io/jetstream';
import { z } from 'zod';
import { parseJson } from '../base/parse-json.js';
import type { Quarantine } from '../base/quarantined-record.js';
import type { FencedKv } from '../nats/fenced-kv.js';

const META = 'meta';
const CHECKPOINT = 'checkpoint';
const OBSERVED = 'observed';
const PEER_CANCEL = 'peer_cancel';
const CheckpointSchema = z.record(z.string(), z.unknown());
/** How many task records `load` reads at once. */
const LOAD_WINDOW = 64;

/**
 * The answer to a task that does not exist, and to a read of one the caller may not see: the same error (AG2's
 * message), so that no read tells the two apart. It echoes only the id the caller sent.
 */
export function taskNotFound(taskId: string): NotFoundError {
  return new NotFoundError(`task not found: ${taskId}`);
}

/**
 * The tasks of one hub: records in memory over the KV bucket `<PREFIX>_tasks`, whose keys are
 * `meta.<task_id>` (the `TaskMetadata`), `checkpoint.<task_id>` (the owner's last checkpoint) and
 * `observed.<task_id>` (the task's outcome was counted in its owner's resume). Writes go to KV first.
 */
export class TaskTable {
  readonly #tasks = new Map<string, TaskMetadata>();
  /** Ids of tasks that are not terminal: what TTL sweeps and channel cascades look at. */
  readonly #open = new Set<string>();

  /**
   * @param kv the tasks bucket, written under the home partition's lease.
   * @param writtenElsewhere true in a deployment of several partitions, whose tasks only the home partition's owner
   *   writes: another hub's partitions leave task changes to it (`writesHere`).
   */
  constructor(
    private readonly kv: FencedKv,
    private readonly writtenElsewhere = false,
  ) {}

  /**
   * Whether this hub writes the tasks now: always with one partition (a write after the lease lapsed is refused as
   * every write is); with several, only while it holds the home partition.
   */
  writesHere(): boolean {
    return !this.writtenElsewhere || this.kv.mayWrite();
  }

  get(taskId: string): TaskMetadata | undefined {
    return this.#tasks.get(taskId);
  }

  /** The task; `NotFoundError` "task not found: <id>" otherwise (AG2's message). */
  require(taskId: string): TaskMetadata {
    const task = this.#tasks.get(taskId);
    if (task === undefined) throw taskNotFound(taskId);
    return task;
  }

  /**
   * Rebuilds the table from KV, reading a window of records at once; a record that does not parse, or names another
   * task than its key, is quarantined.
   */
  async load(quarantine: Quarantine): Promise<void> {
    this.#tasks.clear();
    this.#open.clear();
    const keys: string[] = [];
    for await (const key of await this.kv.keys(`${META}.>`)) keys.push(key);
    for (let i = 0; i < keys.length; i += LOAD_WINDOW) {
      const entries = await Promise.all(keys.slice(i, i + LOAD_WINDOW).map((key) => this.kv.get(key)));
      for (const entry of entries) {
        if (entry === null || entry.operation !== 'PUT') continue;
        const parsed = parseJson(entry.string(), TaskMetadataSchema);
        if (parsed.ok && entry.key === `${META}.${parsed.value.task_id}`) this.#index(parsed.value);
        else {
          const reason = parsed.ok ? `task ${parsed.value.task_id} under the key ${entry.key}` : parsed.reason;
          quarantine({ source: 'tasks', key: entry.key, seq: entry.revision, reason });
        }
      }
    }
  }

  /**
   * Reads one task again from KV and indexes it (a task is never removed, so a missing or unreadable record changes
   * nothing). How a hub that does not write the tasks follows them.
   */
  async refresh(taskId: string, quarantine: Quarantine): Promise<void> {
    const entry = await this.kv.get(`${META}.${taskId}`);
    if (entry === null || entry.operation !== 'PUT') return;
    const parsed = parseJson(entry.string(), TaskMetadataSchema);
    if (parsed.ok && parsed.value.task_id === taskId) this.#index(parsed.value);
    else
      quarantine({
        source: 'tasks',
        key: entry.key,
        seq: entry.revision,
        reason: parsed.ok ? 'another task' : parsed.reason,
      });
  }

  /** Stores a task and then indexes it. */
  async put(task: TaskMetadata): Promise<TaskMetadata> {
    await this.kv.put(`${META}.${task.task_id}`, JSON.stringify(task));
    this.#index(task);
    return task;
  }

  #index(task: TaskMetadata): void {
    this.#tasks.set(task.task_id, task);
    if (isTerminalTaskState(task.state)) this.#open.delete(task.task_id);
    else this.#open.add(task.task_id);
  }

  async writeCheckpoint(taskId: string, state: Readonly<Record<string, unknown>>): Promise<void> {
    await this.kv.put(`${CHECKPOINT}.${taskId}`, JSON.stringify(state));
  }

  async readCheckpoint(taskId: string): Promise<Record<string, unknown> | null> {
    const entry = await this.kv.get(`${CHECKPOINT}.${taskId}`);
    return entry === null || entry.operation !== 'PUT' ? null : CheckpointSchema.parse(entry.json());
  }

  /**
   * Marks a task's outcome as counted in its owner's resume; `false` when it already was. A KV create, so it holds
   * across restarts and concurrent hubs (AG2 kept the set in memory).
   */
  async markObserved(taskId: string): Promise<boolean> {
    try {
      await this.kv.create(`${OBSERVED}.${taskId}`, '1');
      return true;
    } catch (err) {
      if (isKeyTaken(err)) return false;
      throw err;
    }
  }

  /**
   * Claims the one cancel request `senderId` may send for a task it does not take part in, for the envelope
   * `envelopeId`: true when this envelope holds the claim (just now, or since a try of the same post whose answer was
   * lost), false when another envelope of that sender holds it. A KV create, so it holds across restarts and hubs.
   */
  async claimPeerCancel(taskId: string, senderId: string, envelopeId: string): Promise<boolean> {
    const key = `${PEER_CANCEL}.${taskId}.${senderId}`;
    try {
      await this.kv.create(key, envelopeId);
      return true;
    } catch (err) {
      if (!isKeyTaken(err)) throw err;
      const entry = await this.kv.get(key);
      return entry !== null && entry.operation === 'PUT' && entry.string() === envelopeId;
    }
  }

  /** Every task, oldest first (by `created_at`, then id). */
  all(): TaskMetadata[] {
    return [...this.#tasks.values()].sort(byCreation);
  }

  /** The tasks that are not terminal, oldest first. */
  open(): TaskMetadata[] {
    return [...this.#open].map((id) => this.require(id)).sort(byCreation);
  }

  /** How many tasks `ownerId` has that are not terminal. */
  openCount(ownerId: string): number {
    let n = 0;
    for (const id of this.#open) if (this.#tasks.get(id)?.owner_id === ownerId) n += 1;
    return n;
  }
}

function byCreation(a: TaskMetadata, b: TaskMetadata): number {
  if (a.created_at !== b.created_at) return Date.parse(a.created_at) - Date.parse(b.created_at);
  return a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0;
}

/** The failure of a KV create whose key already holds a value. */
function isKeyTaken(err: unknown): boolean {
  if (err instanceof JetStreamApiError && err.code === 10071) return true;
  return err instanceof Error && /wrong last sequence|key exists/i.test(err.message);
}
