import { TurnLockHolderSchema } from '@ag2net/protocol/internal';
import { z } from 'zod';
import { TURN_LOCK_MAX_TTL_MS } from '../nats/provision.js';

/**
 * The value of a turn-lock key: who holds it, its TTL, and when it lapses by the clock of the hub that last wrote it
 * (ms since the epoch). It lives in KV, so the hub that takes over after a failover reads it and honours it.
 */
export const TurnLockRecordSchema = z.strictObject({
  holder: TurnLockHolderSchema,
  ttl_ms: z.number().int().positive().max(TURN_LOCK_MAX_TTL_MS),
  expires_at: z.number().int().nonnegative(),
});
export type TurnLockRecord = z.infer<typeof TurnLockRecordSchema>;

/** The key of the lock of `agentId`'s turns in `channelId`. Both are ids (letters, digits, `_`, `-`): one token each. */
export function turnLockKey(agentId: string, channelId: string): string {
  return `${agentId}.${channelId}`;
}
