/**
 * Clients of the ag2net hub over NATS: a connection (`HubClient`), agents and humans on the network, channels.
 *
 * @example
 * ```ts
 * import { HubClient } from '@ag2net/client';
 *
 * // On a secured deployment: the registrant's credentials; each identity then gets its own (kept at credsPath).
 * await using hub = await HubClient.connect({ servers: 'nats://127.0.0.1:4222', creds: '.data/auth/registrant.creds' });
 * const alice = await hub.registerHuman({ name: 'alice' }, { credsPath: '.data/alice.creds' });
 * const bob = await hub.register({ name: 'bob' }); // accepts invites; give it a handler to answer
 * const channel = await alice.open({ type: 'conversation', target: 'bob' });
 * const reply = alice.nextEnvelope({ predicate: (e) => e.sender_id === bob.agentId, timeout: 5000 }); // waits from now
 * await channel.send('hello bob');
 * console.log((await reply)?.event_data);
 * ```
 */
export {
  HubRpc,
  HubUnavailableError,
  DEFAULT_RPC_TIMEOUT_MS,
  DEFAULT_POST_RPC_TIMEOUT_MS,
  defaultAttemptTimeoutMs,
} from './rpc.js';
export type { CallOptions, HubCallOptions, HubRpcOptions } from './rpc.js';
export { HubClient } from './hub-client.js';
export { DEFAULT_ROSTER_WINDOW_MS, heldBy, partitionHolders } from './hub-roster.js';
export type { PartitionHolders, RosterOptions } from './hub-roster.js';
export type { AttachOptions, HubClientOptions, RegisterOptions } from './hub-client-options.js';
export { CredentialsError, DEFAULT_INBOX_PREFIX, inboxPrefixOf } from './credentials.js';
export { IdentityCredentialsError } from './identity.js';
export { Participant, DisconnectedError } from './participant.js';
export type { OpenOptions, NextOptions } from './participant-options.js';
export type {
  SendOptions,
  DisconnectOptions,
  ParticipantHub,
  Poster,
  ChannelOwner,
  Disconnectable,
} from './contracts.js';
export type { HubReads } from './hub-reads.js';
export type { DeliveryContext, DeliveryOutcome } from './inbox.js';
export { DEFAULT_DISCONNECT_GRACE_MS, InboxClosedError, TurnAbortedError } from './inbox.js';
export { EnvelopeTimeoutError, SubscriptionOverflowError, DEFAULT_SUBSCRIPTION_BUFFER } from './subscriptions.js';
export type { Subscription, SubscribeOptions, ReceiveOptions } from './subscriptions.js';
export { AgentClient } from './agent-client.js';
export type {
  AgentHandler,
  AgentClientOptions,
  TaskCancelListener,
  TurnContext,
  FailedTurn,
  TurnFailedListener,
} from './agent-client.js';
export { TURN_LOCK_TTL_MS } from './turn-locks.js';
export { TurnLockLostError } from './turn-lease.js';
export { DEFAULT_MAX_TURN_ATTEMPTS, DEFAULT_TURN_RETRY_BACKOFF_MS, isTransientTurnFailure } from './turn-retries.js';
export { HumanClient } from './human-client.js';
export type { HumanCallback, HumanClientOptions } from './human-client.js';
export { Channel } from './channel.js';
export { replyEnvelopeId } from './names.js';
export { ackInvite, isInviteFor } from './invites.js';
export { silentLogger } from './logger.js';
export { HistoryExpiredDetailsSchema, historyExpiredAt, isHistoryExpired } from './history-expired.js';
export type { HistoryExpiredDetails, HistoryExpiredError } from './history-expired.js';
export type { Logger } from './logger.js';
