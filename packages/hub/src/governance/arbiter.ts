import { repr } from '@ag2net/protocol/internal';
import {
  AccessDeniedError,
  InboxFullError,
  type ChannelManifest,
  type Envelope,
  type HubError,
  type Passport,
  type Rule,
  type TaskMetadata,
} from '@ag2net/protocol';
import { matchesAny } from '../base/glob.js';
import type { Logger } from '../base/logger.js';

/** An agent as the arbiter sees it. */
export interface Party {
  readonly passport: Passport;
  readonly rule: Rule;
}

/** An arbiter's answer: allow, or deny with a reason (the error's message) and the error's code. */
export type Decision =
  | { readonly allow: true }
  | { readonly allow: false; readonly reason: string; readonly code?: 'access_denied' | 'inbox_full' };

/** The decision that allows. */
export const ALLOW: Decision = Object.freeze({ allow: true });

/** A denial; `code` defaults to `access_denied`. */
export function deny(reason: string, code: 'access_denied' | 'inbox_full' = 'access_denied'): Decision {
  return { allow: false, reason, code };
}

/** The error a denial becomes on the wire. */
export function deniedError(decision: Extract<Decision, { allow: false }>): HubError {
  return decision.code === 'inbox_full' ? new InboxFullError(decision.reason) : new AccessDeniedError(decision.reason);
}

/** A post, before the channel is looked up: the sender and the registered agents its audience names. */
export interface SendCheck {
  readonly envelope: Envelope;
  readonly sender: Party;
  readonly recipients: readonly Party[];
}

/** One recipient's inbox, before a substantive envelope is admitted for it. */
export interface InboxCheck {
  readonly envelope: Envelope;
  readonly recipient: Party;
  /** Envelopes delivered to the recipient since it last posted (AG2's pending count). */
  readonly pending: number;
}

/** One delivery of an admitted envelope (the log already has it; a denial only skips this recipient). */
export interface DispatchCheck {
  readonly envelope: Envelope;
  readonly sender: Party;
  readonly recipient: Party;
}

/** A channel about to be created. */
export interface ChannelOpenCheck {
  readonly manifest: ChannelManifest;
  readonly creator: Party;
  readonly invitees: readonly Party[];
  /** Channels the creator created that are pending, active or closing. */
  readonly openChannels: number;
}

/** A task about to be recorded for the first time. */
export interface TaskCheck {
  readonly task: TaskMetadata;
  readonly owner: Party;
  /** The owner's tasks that are not terminal. */
  readonly openTasks: number;
}

/**
 * The hub's policy, consulted at each decision point (AG2's `HubArbiter`). Methods may be async. The default is
 * `ruleBasedArbiter`, which enforces each agent's `Rule`; a custom arbiter can wrap it and add its own checks.
 * Rules are read at every decision, so `setRule` takes effect at the next one.
 */
export interface HubArbiter {
  authorizeSend(check: SendCheck): Decision | Promise<Decision>;
  authorizeInbox(check: InboxCheck): Decision | Promise<Decision>;
  authorizeDispatch(check: DispatchCheck): Decision | Promise<Decision>;
  authorizeChannelOpen(check: ChannelOpenCheck): Decision | Promise<Decision>;
  authorizeTask(check: TaskCheck): Decision | Promise<Decision>;
}

/** Allows everything (AG2's `BaseHubArbiter`). */
export const allowAllArbiter: HubArbiter = Object.freeze({
  authorizeSend: () => ALLOW,
  authorizeInbox: () => ALLOW,
  authorizeDispatch: () => ALLOW,
  authorizeChannelOpen: () => ALLOW,
  authorizeTask: () => ALLOW,
});

/**
 * AG2's `RuleBasedArbiter`, with AG2's messages, plus the parts of `Rule` AG2 declared but never enforced
 * (`channel_types`). Globs match passport names (`fnmatch` semantics); a numeric cap of 0 is no cap.
 */
export const ruleBasedArbiter: HubArbiter = Object.freeze({
  authorizeSend({ envelope, sender, recipients }: SendCheck): Decision {
    const name = sender.passport.name;
    for (const recipient of recipients) {
      if (!matchesAny(recipient.passport.name, sender.rule.access.outbound_to)) {
        return deny(`sender ${repr(name)} not permitted to send to ${repr(recipient.passport.name)}`);
      }
    }
    const cap = sender.rule.limits.delegation_depth;
    if (cap > 0 && envelope.depth > cap) {
      return deny(`sender ${repr(name)} exceeded delegation_depth (${envelope.depth} > ${cap})`);
    }
    return ALLOW;
  },

  authorizeInbox({ recipient, pending }: InboxCheck): Decision {
    const max = recipient.rule.limits.inbox.max_pending;
    if (max > 0 && pending >= max) {
      return deny(
        `recipient ${repr(recipient.passport.agent_id)} inbox at capacity (${pending} >= ${max})`,
        'inbox_full',
      );
    }
    return ALLOW;
  },

  authorizeDispatch({ sender, recipient }: DispatchCheck): Decision {
    return matchesAny(sender.passport.name, recipient.rule.access.inbound_from)
      ? ALLOW
      : deny(`recipient ${repr(recipient.passport.name)} does not accept inbound from ${repr(sender.passport.name)}`);
  },

  authorizeChannelOpen({ manifest, creator, invitees, openChannels }: ChannelOpenCheck): Decision {
    const creatorName = creator.passport.name;
    if (!matchesAny(manifest.type, creator.rule.access.channel_types.initiate)) {
      return deny(`creator ${repr(creatorName)} may not initiate ${repr(manifest.type)} channels`);
    }
    for (const invitee of invitees) {
      const inviteeName = invitee.passport.name;
      if (!matchesAny(creatorName, invitee.rule.access.inbound_from)) {
        return deny(`invitee ${repr(inviteeName)} does not accept inbound from ${repr(creatorName)}`);
      }
      if (!matchesAny(manifest.type, invitee.rule.access.channel_types.accept)) {
        return deny(`invitee ${repr(inviteeName)} does not accept ${repr(manifest.type)} channels`);
      }
      // Invites are explicit-audience sends, so the creator's outbound rule applies to each invitee too.
      if (!matchesAny(inviteeName, creator.rule.access.outbound_to)) {
        return deny(`sender ${repr(creatorName)} not permitted to send to ${repr(inviteeName)}`);
      }
    }
    const cap = creator.rule.limits.max_concurrent_channels;
    if (cap > 0 && openChannels >= cap) {
      return deny(
        `creator ${repr(creator.passport.agent_id)} exceeded max_concurrent_channels (${openChannels} >= ${cap})`,
      );
    }
    return ALLOW;
  },

  authorizeTask({ owner, openTasks }: TaskCheck): Decision {
    const cap = owner.rule.limits.max_concurrent_tasks;
    if (cap > 0 && openTasks >= cap) {
      return deny(`owner ${repr(owner.passport.agent_id)} exceeded max_concurrent_tasks (${openTasks} >= ${cap})`);
    }
    return ALLOW;
  },
});

/** The reason a guarded arbiter gives when the policy itself failed (the error is logged, not quoted). */
export const ARBITER_FAILED = 'the hub policy could not decide (arbiter failed)';

/**
 * Wraps an arbiter so that a method that throws or rejects is a denial: logged, with `ARBITER_FAILED` as the
 * reason, never an `internal` error at admission and never a retried delivery. A policy bug then fails closed for
 * the one decision it could not take (one post refused, one recipient skipped) and nothing else.
 */
export function guardArbiter(arbiter: HubArbiter, logger: Logger): HubArbiter {
  const guard =
    <C>(method: keyof HubArbiter, decide: (check: C) => Decision | Promise<Decision>) =>
    async (check: C): Promise<Decision> => {
      try {
        return await decide(check);
      } catch (err) {
        logger.error({ err, method }, 'arbiter failed; denying');
        return deny(ARBITER_FAILED);
      }
    };
  return Object.freeze({
    authorizeSend: guard('authorizeSend', (c: SendCheck) => arbiter.authorizeSend(c)),
    authorizeInbox: guard('authorizeInbox', (c: InboxCheck) => arbiter.authorizeInbox(c)),
    authorizeDispatch: guard('authorizeDispatch', (c: DispatchCheck) => arbiter.authorizeDispatch(c)),
    authorizeChannelOpen: guard('authorizeChannelOpen', (c: ChannelOpenCheck) => arbiter.authorizeChannelOpen(c)),
    authorizeTask: guard('authorizeTask', (c: TaskCheck) => arbiter.authorizeTask(c)),
  });
}
