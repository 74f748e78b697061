import type { HubOp } from '../src/index.js';

/**
 * What the operations reference says that the schemas cannot: what each operation does, and what each field of its
 * request and result means. Field keys are the rows' paths (`credentials.jwt`, `turns[].channel_id`); a field
 * described in `COMMON_REQUEST_FIELDS` or `COMMON_RESULT_FIELDS` means the same in every operation that has it, and
 * an operation's own entry wins. The renderer refuses a field without a description and a description of a field
 * that is not there, so this table cannot drift from `HUB_OPS`.
 */
export interface OperationDoc {
  /** Markdown: what the operation does, its rules and its own errors. */
  readonly summary: string;
  readonly request?: Readonly<Record<string, string>>;
  readonly result?: Readonly<Record<string, string>>;
}

export const COMMON_REQUEST_FIELDS: Readonly<Record<string, string>> = {
  channel_id: 'The channel.',
  task_id: 'The task.',
  agent_id: 'The agent.',
  name_or_id: "An identity's name or agent id (a name is looked up first).",
  limit: 'At most this many items in the page.',
  cursor:
    'The `next_cursor` of the previous page; `null` (or left out) for the first page. Valid for the same filter only.',
  holder:
    'The replica asking: an id the process chose for itself (a hostname, a ULID), the same on every call of one turn.',
};

export const COMMON_RESULT_FIELDS: Readonly<Record<string, string>> = {
  passport: 'The identity as the hub stored it: `agent_id` and `created_at` stamped, `auth.claim` never returned.',
  credentials:
    'NATS credentials for the identity: `null` on a hub without per-identity auth. Connect with `jwt` and the seed of the key pair whose public key was registered.',
  'credentials.jwt':
    'A user JWT of the identity account for the registered public key, carrying the identity’s permissions.',
  'credentials.expires_at': 'When NATS stops accepting the JWT (its `exp`), as an ISO-8601 string.',
  'credentials.inbox_prefix':
    'The reply-inbox prefix the connection must use (`_INBOX_<agent_id>`): the only one the JWT may subscribe to.',
  next_cursor: 'What to send as `cursor` for the next page; `null` on the last page.',
  channel: 'The channel’s metadata.',
  task: 'The task as the hub stores it.',
  resume: 'The resume as stored (`version` and `last_updated` stamped by the hub).',
  rule: 'The rule as stored and enforced.',
};

const ADMISSION_REPLY = {
  agent_id: 'The identity’s agent id.',
  name: 'Its name.',
  public_key: 'The public key its credentials are issued for; `null` on a hub that issues none.',
  revoked_at: 'When the operator revoked it; `null` while it is admitted.',
} as const;

const PAGE_NOTE =
  'One page, oldest first in creation order; follow `next_cursor` for the rest ([Limits and paging](../../protocol.md#limits-and-paging)).';

export const OPERATION_DOCS: { readonly [Op in HubOp]: OperationDoc } = {
  register: {
    summary:
      'Registers an identity: checks the admission credential in `passport.auth` (`auth_failed` "admission refused for \'<name>\'", the same for no key, a wrong key and a revoked identity), refuses a taken name (`protocol_error` "name \'<name>\' already registered (agent_id=…); unregister it before re-registering.", `details.reason` `name_taken`), stamps `agent_id` and `created_at`, creates the durable inbox consumer `agent_<agent_id>` and, on a hub that issues credentials, answers a JWT for `public_key` ([Credentials](../../protocol.md#credentials)). A retry is recognised and answered with the same identity: the same name with the registered `public_key`, or a passport naming the `agent_id` the name is registered under. Budgeted per connection and per source address: past them `unavailable` with `details.retry_after_ms`.',
    request: {
      passport:
        'Who registers: `name` (unique on the hub), `kind`, the admission credential in `auth` (`{ "scheme": "api_key", "claim": { "token": "…" } }` on a hub with API keys). A proposed `agent_id` makes a retry recognisable.',
      resume: 'What it claims to do; `observed` is the hub’s and is ignored here.',
      skill_md: 'Its SKILL.md (Markdown), or `null`.',
      rule: 'Its access globs and limits; `null` for the default rule. Held under the operator’s ceilings.',
      public_key:
        'The identity’s nkey user public key. Required by a hub that issues credentials (`invalid_request` without it); make the pair in the identity’s process and keep the seed there. Ignored by a hub that issues none.',
    },
  },
  attach: {
    summary:
      'Fresh credentials for an identity registered earlier, for its registered public key: its JWT expired, NATS refused the persisted one (revoked and re-admitted, or an upgraded deployment), or a new process takes the identity over. The admission credential is checked first, under the name asked for, so an unknown name and a wrong key get the same `auth_failed`; then `not_found` "agent not found: <name_or_id>" for an identity the authenticator admitted but nobody registered; a `public_key` other than the registered one is `auth_failed`. The newest JWT is handed out again while it has more than half of its lifetime ahead. On a hub that issues no credentials: `invalid_request`.',
    request: {
      public_key: 'The public key the identity registered with; only the holder of its seed can use the JWT.',
      auth: 'The admission credential, as in `register`’s `passport.auth`.',
      'auth.scheme': 'The admission scheme: `api_key` on a hub with API keys, `none` on an open one.',
      'auth.issuer': 'Carried, not checked.',
      'auth.audience': 'Carried, not checked.',
      'auth.key_fingerprint': 'Ignored in a request; the hub shows the stored key’s fingerprint in passports.',
      'auth.claim': 'The scheme’s claim: `{ "token": "<api key>" }` for `api_key`. Never stored.',
    },
  },
  renewCredentials: {
    summary:
      'A JWT for the caller’s registered public key with a new lifetime. The hub hands the identity’s newest JWT out again while it has more than half of its lifetime ahead and issues a new one only after, so a client that renews at two thirds of the lifetime always gets a new one; the new one retires every JWT but the one it replaced. Refused once the identity is unregistered or revoked (`access_denied` "unknown caller \'<id>\'"). Switch the connection to the new JWT (the next reconnect authenticates with it). On a hub that issues no credentials: `invalid_request`.',
    result: {
      credentials:
        'The identity’s credentials: a new JWT, or the newest one again while it has more than half of its lifetime ahead.',
    },
  },
  unregister: {
    summary:
      'Removes the caller’s identity and deletes its inbox consumer with what it held. Its name is free again; its channels and their logs stay. Every later call as it is `access_denied` "unknown caller".',
  },
  revokeIdentity: {
    summary:
      'The operator revokes an identity until it re-admits it: every call it makes is refused as an unknown caller’s, and `register` and `attach` refuse its admission credential like a wrong one, so it gets no new JWT. Its name, channels and inbox stay. NATS keeps accepting JWTs it holds until they expire unless its key is revoked in the account too (`ag2net creds revoke` does both). Revoking a revoked identity answers the first revocation. `not_found` "agent not found: <name_or_id>".',
    result: ADMISSION_REPLY,
  },
  readmitIdentity: {
    summary:
      'The operator re-admits a revoked identity: its next `attach` gets a JWT dated after the revocation; every JWT it held before stays refused. Re-admitting an admitted identity changes nothing.',
    result: ADMISSION_REPLY,
  },
  getAgent: {
    summary: 'An identity’s passport, by name or id. `not_found` "agent not found: <name_or_id>".',
  },
  getResume: {
    summary: 'An identity’s resume. `not_found` "resume not found: <agent_id>".',
  },
  getSkill: {
    summary: 'An identity’s SKILL.md.',
    result: { skill_md: 'The Markdown, or `null` when it has none (or no identity has that id).' },
  },
  getRule: {
    summary: 'An identity’s rule. `not_found` "rule not found: <agent_id>".',
  },
  findAgentId: {
    summary: 'The agent id registered under a name.',
    request: { name: 'The name.' },
    result: { agent_id: 'Its id, or `null` when no identity has that name.' },
  },
  listAgents: {
    summary: `The registered identities, filtered, in registration order (or by name). ${PAGE_NOTE}`,
    request: {
      capability: 'Only identities that claim this capability or were observed doing it.',
      query: 'Only identities whose resume summary contains this text, case-insensitively.',
      kind: 'Only identities of this kind (a passport without `kind` counts as `agent`).',
      sort_by: '`name`: order by name instead of registration.',
    },
    result: { agents: 'Their passports.' },
  },
  setResume: {
    summary:
      'Replaces the caller’s resume. The hub keeps its own `observed`, raises `version` by one and stamps `last_updated`.',
    request: { resume: 'The new resume; `observed`, `version` and `last_updated` are ignored.' },
  },
  setSkill: {
    summary: 'Replaces the caller’s SKILL.md, or removes it.',
    request: { skill_md: 'The Markdown, or `null` to remove it.' },
  },
  setRule: {
    summary:
      'Replaces the caller’s rule from the next decision on; `version` goes up by one. Limits are held under the operator’s ceilings (a 0, or anything higher, becomes the ceiling), so a rule can only be stricter than the operator’s.',
    request: { rule: 'The new rule.' },
  },
  recordObservation: {
    summary:
      'Counts an ended task the caller owns in its observed track record under `capability` (only for a task without `spec.capability`: the hub counts those itself). A task counts once. `invalid_request` without `task_id` or when `outcome` is not how the task ended; `protocol_error` for a task that has not ended; `access_denied` for another’s task.',
    request: {
      capability: 'The capability the task exercised.',
      outcome: 'How the task ended: must be its state.',
      latency_ms: 'Ignored: the hub takes the latency from the task’s `started_at` and `completed_at`.',
      task_id: 'The ended task (required in practice).',
    },
    result: { resume: 'The caller’s resume with the observation counted.' },
  },
  createChannel: {
    summary:
      'Creates a channel of `type` with the caller as creator (`initiator`) and invites the participants; answers once every invitee acked, with the active channel ([Opening a channel](../../protocol.md#opening-a-channel)). A reject closes it (`protocol_error` "channel \'<id>\' closed during handshake: invite_rejected"), and so does the ack timeout, 30 s by default (`protocol_error` "channel \'<id>\' ack timeout"): give the call at least that long. Idempotent through `channel_id`: a retry with the same id answers the channel it made.',
    request: {
      channel_id: 'A proposed id, so that a retried create finds the channel it made; the hub mints one otherwise.',
      type: 'The channel type: `consulting`, `conversation`, `discussion`, `workflow`, or a custom adapter’s.',
      version: 'The adapter’s version.',
      participants:
        'The invitees, by agent id or name (the creator is added first if it is not listed). At least one; none twice; all registered (`not_found` "participant not registered: <x>").',
      ttl: 'How long the channel lives before it expires; default the creator’s rule’s `channel_ttl_default` (2 h).',
      knobs:
        'The adapter’s knobs, checked by it (`protocol_error` with AG2’s message): a workflow’s `graph`, a discussion’s `ordering`, …',
      intent: 'Why the channel exists, free text; stored as `labels.intent`.',
      labels: 'Free labels for the channel.',
    },
  },
  getChannel: {
    summary: `A channel’s metadata: participants, handshake and lifecycle state, terms, labels, close reason, and \`expired_at\` once its history expired (the hub’s history retention removed its log). A channel the caller is not in answers \`not_found\` "channel not found: <channel_id>", as one that does not exist.`,
  },
  listChannels: {
    summary: `The channels the caller takes part in (every channel for the operator), ended ones included, with \`expired_at\` on those whose history expired. ${PAGE_NOTE}`,
    request: {
      agent_id: 'Only channels this agent takes part in too.',
      state: 'Only channels in this state.',
    },
    result: { channels: 'Their metadata.' },
  },
  closeChannel: {
    summary:
      'Ends a channel the caller takes part in: it becomes `closing`, delivers what it admitted, writes `ag2.channel.closed` to every participant and becomes `closed`; answers once it ended. Closing an ended channel answers it unchanged.',
    request: { reason: 'The close reason; `""` records `explicit_close`.' },
    result: { channel: 'The ended channel’s metadata.' },
  },
  post: {
    summary:
      'Admits an envelope into the channel’s log and delivers it to its audience ([Admission of a post](../../protocol.md#admission-of-a-post)). The request is the envelope. Idempotent through `envelope_id`: a retry of an admitted post answers the original ack; someone else’s envelope under that id is `conflict`. A caller outside the channel gets AG2’s `protocol_error` for it.',
    request: {
      sender_id: 'The caller; anything else is `auth_failed`.',
      audience: 'Who may see it: agent ids of participants, or `null` for every participant.',
      event_type: 'An `ag2.*` event type or any custom dotted name.',
      event_data: 'The payload; built-in event types have a shape each (`invalid_request` otherwise).',
      envelope_id:
        'A client-minted id, so that a retry is admitted once; `""` lets the hub mint one. `r-…` and `rh-…` ids are reply ids, admitted only as the sender’s reply to `causation_id`.',
      task_id: 'The task the envelope belongs to.',
      causation_id: 'The envelope this one answers.',
      trace_id: 'The conversation’s trace, 32 hex digits.',
      priority: 'Carried, not acted on.',
      depth: 'Delegation depth, checked against the sender’s `delegation_depth`.',
      idempotency_key: 'Carried.',
      created_at: 'Ignored: the hub stamps its own time.',
      ttl_seconds: 'Carried.',
      sequence: 'Ignored: the hub stamps the envelope’s position in the log.',
    },
    result: {
      envelope_id: 'The admitted envelope’s id (the one proposed, or the hub’s).',
      sequence: 'Its position in the channel’s log, from 1.',
      created_at: 'The hub’s time of admission.',
    },
  },
  readWal: {
    summary:
      'The channel’s log as the caller may see it (the operator sees all of it), in sequence order. A page stops at `limit` envelopes or 512 KiB; continue from `next_since`. A channel whose history expired answers `not_found` "the history of channel <channel_id> expired at <expired_at>", `details: { reason: "expired", channel_id, expired_at }`.',
    request: {
      since: 'The first sequence to return (inclusive).',
      until: 'The last sequence to return (inclusive); `null` for the end of the log.',
    },
    result: {
      envelopes: 'The envelopes the caller may see in the range, with `sequence` and `created_at`.',
      last_sequence: 'The sequence of the channel’s last envelope (0 for an empty log), seen or not.',
      next_since: 'The `since` that continues the read when the page stopped early; `null` when the range is done.',
    },
  },
  findEnvelopeByCausation: {
    summary:
      'The answer a sender gave to an envelope: `sender_id`’s latest envelope in the channel whose `causation_id` is the one asked, among the channel’s last 1,024 answers.',
    request: {
      sender_id: 'Who answered.',
      causation_id: 'The envelope answered.',
    },
    result: { envelope: 'The answer, or `null` when there is none or the caller may not see it.' },
  },
  canSend: {
    summary: 'Whether the caller’s post of `event_type` would pass the adapter now (its turn check), without posting.',
    request: { event_type: 'The event type to probe; `null` for `ag2.msg.text`.' },
    result: { allowed: 'True when the adapter would accept it now.' },
  },
  pendingTurnsFor: {
    summary:
      'Every active channel where the caller is the expected next speaker, with the envelope that made it its turn.',
    result: {
      turns: 'One per channel.',
      'turns[].channel_id': 'The channel.',
      'turns[].triggering_envelope_id':
        'The last turn envelope of the channel, to answer; `null` before the first turn.',
      'turns[].expected_at':
        'When that envelope was admitted; before the first turn, when the channel’s latest envelope (its `ag2.channel.opened`) was.',
    },
  },
  adapterState: {
    summary:
      'The adapter’s state of the channel as the caller may see it (`stateFor`): turn structure for every participant, content only for its readers; the whole state for the operator. A channel whose history expired answers `not_found` with `details.reason` `expired`, as `readWal` does.',
    result: { state: 'The state, or `null` for a channel without a registered adapter.' },
  },
  deliveryLag: {
    summary:
      'How far the active hub’s delivery (its durable consumer over the WAL that fans envelopes out to the inboxes) lags behind admission.',
    result: {
      delivery: 'The lag, or `null` before the hub ever provisioned its delivery consumer.',
      'delivery.pending': 'WAL messages not yet handed to the hub’s delivery.',
      'delivery.ack_pending': 'Messages handed to it and not yet fanned out.',
      'delivery.oldest_pending_age_seconds': 'How long ago the oldest of those was admitted; `null` when none pends.',
    },
  },
  health: {
    summary:
      'The health of the hub serving the home partition (every hub of the prefix, standbys too, answers the roster `<p>.hubs.v1.ping`); also how a client learns the prefix’s partition count.',
    result: {
      hub_id: 'The hub’s id.',
      role: '`active` (serves at least one partition) or `standby` (a hub waiting for a lease).',
      epoch: 'The lease epoch of the first partition it serves (0 for a standby).',
      active_channels: 'Channels not ended, of the partitions it serves.',
      registered_agents: 'Registered identities.',
      adapters_loaded: 'Adapters registered (the four built-in ones, and custom ones).',
      uptime_seconds: 'Seconds since the hub started.',
      quarantined: 'WAL messages and KV records the hub skipped because no hub wrote them.',
      dead_letters: 'Deliveries the hub gave up after their retries and parked in the audit trail.',
      partitions:
        'How many partitions the prefix spreads its channels over (`fnv1a32(utf8(channel_id)) mod partitions`); absent from older hubs: 1.',
      held: 'The partitions this hub serves now, each with its lease epoch.',
      'held[].partition': 'The partition.',
      'held[].epoch': 'Its lease epoch, the revision of its lease key when this hub took it.',
    },
  },
  observeTask: {
    summary:
      'Records a task the caller owns (`owner_id` must be the caller, else `auth_failed`); a task in a channel needs its owner among the channel’s participants and a channel not ended. A new task counts against the owner’s `max_concurrent_tasks` and gets `expires_at` from its `task_ttl_default`; a known one is updated (state, timestamps, channel, progress merged).',
    request: { task: 'The task: `task_id`, `owner_id`, `created_at`, and whatever else is known.' },
  },
  updateTask: {
    summary: 'Updates a task the caller owns. Tasks only move forward; a terminal task is left as it is.',
    request: {
      state: 'The new state.',
      progress: 'Progress to merge into the task’s.',
      result: 'The task’s result, any JSON.',
      error: 'What went wrong, for a failed task.',
    },
  },
  getTask: {
    summary:
      'A task the caller owns or whose channel it takes part in (any task for the operator); any other answers `not_found` "task not found: <task_id>", as one that does not exist.',
  },
  listTasks: {
    summary: `The tasks \`getTask\` would show the caller, filtered. ${PAGE_NOTE}`,
    request: {
      agent_id: 'Only tasks this agent owns.',
      channel_id: 'Only tasks of this channel.',
      state: 'Only tasks in this state.',
    },
    result: { tasks: 'The tasks.' },
  },
  checkpointTask: {
    summary: 'Stores the owner’s checkpoint of a task (last write wins).',
    request: { state: 'The checkpoint, any JSON object.' },
  },
  readTaskCheckpoint: {
    summary: 'The owner’s last checkpoint of a task.',
    result: { state: 'The checkpoint, or `null` when none was written.' },
  },
  fireTaskEvent: {
    summary: 'Records an event of the caller’s task runtime in the audit trail (`task_event`), e.g. `mirror_failed`.',
    request: { kind: 'What happened.', payload: 'Its details.' },
  },
  reportTurnFailure: {
    summary:
      'The caller could not take its turn on an envelope: recorded in the audit trail as `turn_failed`. To tell the channel, post `ag2.turn.failed`.',
    request: {
      envelope_id: 'The envelope whose turn failed.',
      exc_type: 'The failure’s type.',
      exc_message: 'Its message.',
    },
  },
  acquireTurnLock: {
    summary:
      'Takes the caller’s turn lock in a channel for one replica ([Turn locks](../../protocol.md#turn-locks)). Acquiring a lock the same holder has renews it.',
    request: { ttl_ms: 'How long the lock lives without a renewal, in ms.' },
    result: { acquired: 'False while another holder’s lock is alive: hand the delivery back.' },
  },
  renewTurnLock: {
    summary: 'Extends the caller’s lock in a channel by its TTL, from now.',
    result: {
      renewed:
        'False when `holder` no longer holds it (it lapsed, was released, or another took it): give the turn up.',
    },
  },
  releaseTurnLock: {
    summary: 'Releases the caller’s lock in a channel if `holder` holds it (live or lapsed); otherwise does nothing.',
  },
  readAudit: {
    summary: `The audit trail, oldest first, filtered. ${PAGE_NOTE}`,
    request: {
      kinds: 'Only records of these kinds (any of them); empty for all.',
      channel_id: 'Only records about this channel.',
      agent_id: 'Only records that name this agent, in any role.',
      since: 'Only records at or after this time.',
      until: 'Only records before this time.',
    },
    result: {
      records: 'The records.',
      'records[].id': 'The record’s id (a record published twice keeps it).',
      'records[].kind':
        'What it records: `agent_registered`, `channel_closed`, `expectation_violated`, … (an open set).',
      'records[].at': 'When it happened, by the hub’s clock.',
      'records[].*': 'The kind’s own fields, AG2’s names (`channel_id`, `agent_id`, `reason`, …).',
    },
  },
};
