import { ChannelState, type Health } from '@ag2net/protocol';
import {
  adapterStateFor,
  closeChannel,
  canSend,
  findByCausation,
  listChannels,
  pendingTurnsFor,
  readWal,
} from './operations/channel-ops.js';
import {
  getAgent,
  getResume,
  getRule,
  recordObservation,
  register,
  type RegisterDeps,
  type UnregisterDeps,
  setResume,
  setRule,
  setSkill,
  unregister,
} from './operations/agent-ops.js';
import { postEnvelope, type AdmissionDeps } from './operations/admission.js';
import {
  attach,
  readmitIdentity,
  renewCredentials,
  revokeIdentity,
  type RevocationDeps,
} from './operations/credential-ops.js';
import { deliveryLag } from './operations/delivery-lag.js';
import { pageBudget, pageOf } from './base/paging.js';
import { createChannel, type CreateChannelDeps } from './operations/create-channel.js';
import { metadataOf } from './operations/retention.js';
import type { HubHandlers } from './rpc/rpc-server.js';
import {
  checkpointTask,
  fireTaskEvent,
  getTask,
  listTasks,
  observeTask,
  type TaskViewDeps,
  readTaskCheckpoint,
  updateTask,
} from './operations/task-ops.js';
import { reportTurnFailure, type TurnFailureDeps } from './operations/turn-failures.js';
import { turnLockTable, type TurnLockDeps } from './operations/hub-turn-locks.js';
import type { HubEnv } from './partition/hub-parts.js';
import type { PartitionPick } from './partition/partition.js';

/** What the RPC handlers use: what each operation they map onto uses, and the connection that bounds a page. */
export type HandlerDeps = RegisterDeps &
  UnregisterDeps &
  RevocationDeps &
  TurnLockDeps &
  AdmissionDeps &
  CreateChannelDeps &
  TurnFailureDeps &
  TaskViewDeps &
  Pick<HubEnv, 'nc'>;

/**
 * Maps each RPC operation onto the hub's core. The RPC server runs a handler only for a caller the op's access class
 * allows (see `authorize`), so handlers check no access class themselves.
 */
export function buildHandlers(ctx: HandlerDeps, health: () => Health): HubHandlers {
  const turnLocks = turnLockTable(ctx);
  return {
    register: (req) => register(ctx, req),
    attach: (req) => attach(ctx, req),
    renewCredentials: async (_req, caller) => ({ credentials: await renewCredentials(ctx, caller) }),
    acquireTurnLock: async (req, caller) => ({ acquired: await turnLocks.acquire(caller, req) }),
    renewTurnLock: async (req, caller) => ({ renewed: await turnLocks.renew(caller, req) }),
    releaseTurnLock: async (req, caller) => {
      await turnLocks.release(caller, req);
      return {};
    },
    revokeIdentity: (req) => revokeIdentity(ctx, req.name_or_id),
    readmitIdentity: (req) => readmitIdentity(ctx, req.name_or_id),
    deliveryLag: async () => ({ delivery: await deliveryLag(ctx) }),
    unregister: async (_req, caller) => {
      await unregister(ctx, caller);
      return {};
    },
    getAgent: (req) => ({ passport: getAgent(ctx, req.name_or_id) }),
    getResume: (req) => ({ resume: getResume(ctx, req.agent_id) }),
    getSkill: (req) => ({ skill_md: ctx.registry.get(req.agent_id)?.skill ?? null }),
    getRule: (req) => ({ rule: getRule(ctx, req.agent_id) }),
    findAgentId: (req) => ({ agent_id: ctx.registry.idForName(req.name) }),
    listAgents: (req) => {
      const matching = ctx.registry.list({
        capability: req.capability,
        query: req.query,
        kind: req.kind,
        sortBy: req.sort_by,
        limit: Number.MAX_SAFE_INTEGER,
      });
      const page = pageOf(matching, { ...req, budgetBytes: pageBudget(ctx.nc) });
      return { agents: page.items, next_cursor: page.next_cursor };
    },
    setResume: async (req, caller) => ({ resume: await setResume(ctx, caller, req.resume) }),
    setSkill: async (req, caller) => {
      await setSkill(ctx, caller, req.skill_md);
      return {};
    },
    setRule: async (req, caller) => ({ rule: await setRule(ctx, caller, req.rule) }),
    recordObservation: async (req, caller) => ({ resume: await recordObservation(ctx, caller, req) }),
    createChannel: async (req, caller) => ({ channel: await createChannel(ctx, caller, req) }),
    // A participant's or the operator's (the RPC server let nobody else through).
    getChannel: (req) => ({ channel: metadataOf(ctx, ctx.partition.channels.require(req.channel_id)) }),
    listChannels: (req, caller) => {
      const page = listChannels(ctx, caller, req);
      return { channels: page.items, next_cursor: page.next_cursor };
    },
    closeChannel: async (req) => ({ channel: await closeChannel(ctx, req.channel_id, req.reason) }),
    post: (req, caller) => postEnvelope(ctx, caller, req),
    readWal: (req, caller) => readWal(ctx, caller, req),
    findEnvelopeByCausation: async (req, caller) => ({ envelope: await findByCausation(ctx, caller, req) }),
    canSend: (req, caller) => ({ allowed: canSend(ctx, caller, req) }),
    pendingTurnsFor: (_req, caller) => ({ turns: pendingTurnsFor(ctx, caller) }),
    adapterState: async (req, caller) => ({ state: await adapterStateFor(ctx, caller, req.channel_id) }),
    health: () => health(),
    observeTask: async (req, caller) => ({ task: await observeTask(ctx, caller, req.task) }),
    updateTask: async (req, caller) => ({ task: await updateTask(ctx, caller, req) }),
    getTask: (req, caller) => ({ task: getTask(ctx, caller, req.task_id) }),
    listTasks: (req, caller) => {
      const page = listTasks(ctx, caller, req);
      return { tasks: page.items, next_cursor: page.next_cursor };
    },
    checkpointTask: async (req, caller) => {
      await checkpointTask(ctx, caller, req);
      return {};
    },
    readTaskCheckpoint: async (req, caller) => ({ state: await readTaskCheckpoint(ctx, caller, req.task_id) }),
    fireTaskEvent: async (req, caller) => {
      await fireTaskEvent(ctx, caller, req);
      return {};
    },
    reportTurnFailure: async (req, caller) => {
      await reportTurnFailure(ctx, caller, req);
      return {};
    },
    // The operator's only (access class `operator`).
    readAudit: (req) => ctx.audit.read(req, pageBudget(ctx.nc)),
  };
}

/** How many channels are pending, active or closing. */
export function openChannelCount(ctx: PartitionPick<'channels'>): number {
  return ctx.partition.channels
    .all()
    .filter((rt) => rt.metadata.state !== ChannelState.Closed && rt.metadata.state !== ChannelState.Expired).length;
}
