import { NotFoundError } from '@ag2net/protocol';
import type { Passport } from '@ag2net/protocol';
import { ToolErrorCode, ToolFailure } from '../errors.js';
import type { ToolContext } from './tool.js';

/** The registered agent of a name or id; `not_found` when there is none. */
export async function resolveAgent(ctx: ToolContext, nameOrId: string): Promise<Passport & { agent_id: string }> {
  let passport: Passport;
  try {
    passport = await ctx.session.participant.hub.getAgent(nameOrId, { signal: ctx.signal });
  } catch (err) {
    if (err instanceof NotFoundError)
      throw new ToolFailure(ToolErrorCode.NotFound, `no agent named ${JSON.stringify(nameOrId)}`, { cause: err });
    throw err;
  }
  const agentId = passport.agent_id;
  if (agentId === null) throw new ToolFailure(ToolErrorCode.NotFound, `${JSON.stringify(nameOrId)} has no agent id`);
  return { ...passport, agent_id: agentId };
}
