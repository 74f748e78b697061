import { z } from 'zod';
import { WireErrorSchema } from '../errors.js';

/**
 * Every RPC reply: `{ "ok": true, "result": … }` or `{ "ok": false, "error": { code, message, details? } }`.
 * The result is validated against the operation's response schema by the caller.
 */
export const RpcReplySchema = z.discriminatedUnion('ok', [
  z.strictObject({ ok: z.literal(true), result: z.unknown() }),
  z.strictObject({ ok: z.literal(false), error: WireErrorSchema }),
]);
export type RpcReply = z.infer<typeof RpcReplySchema>;
