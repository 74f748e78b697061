import { HubClient, type AgentClient, type HumanClient, type Logger } from '@ag2net/client';
import { IdSchema } from '@ag2net/protocol';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/** Options of `connectIdentity`. */
export interface ConnectIdentityOptions {
  /** NATS server URL(s); default `nats://127.0.0.1:4222`. */
  readonly servers?: string | string[];
  /** The hub's prefix; default `ag2`. */
  readonly prefix?: string;
  /**
   * Path of an identity's `.creds` file (what the SDK keeps for each identity in `.data/creds/…`, or
   * `ag2net creds issue --out`). The identity connects with it and renewed credentials are written back to it.
   */
  readonly credsPath?: string;
  /** On a hub without auth (no `credsPath`): the name to act as, registered as an agent when it is new. */
  readonly name?: string;
  /** pino-compatible logger; default silent. */
  readonly logger?: Logger;
}

/** The identity could not be reached with what it was given. Local. */
export class IdentityError extends Error {
  override readonly name = 'IdentityError';
}

/** A connected identity: the participant and the hub client it was reached through (closed together). */
export interface ConnectedIdentity extends AsyncDisposable {
  readonly participant: AgentClient | HumanClient;
  /** Disconnects the participant and closes every connection. Idempotent. */
  close(): Promise<void>;
}

const ClaimsSchema = z.looseObject({ name: z.string().optional() });

/** The agent id an identity's `.creds` file is for: its JWT's `name`. */
export async function agentIdOfCredsFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new IdentityError(`cannot read ${path}`, { cause: err });
  }
  const jwt = /-----BEGIN NATS USER JWT-----\s+(\S+)\s+------END NATS USER JWT------/.exec(text)?.[1];
  if (jwt === undefined) throw new IdentityError(`${path} is not a .creds file`);
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
  } catch (err) {
    throw new IdentityError(`${path} holds a malformed JWT`, { cause: err });
  }
  const name = ClaimsSchema.safeParse(claims);
  const agentId = IdSchema.safeParse(name.success ? name.data.name : undefined);
  if (!agentId.success) {
    throw new IdentityError(
      `${path} holds no identity's credentials (the registrant's or an operator's?): pass an agent's or person's .creds`,
    );
  }
  return agentId.data;
}

/**
 * Reaches one identity of the network as the SDK attaches to it: with its `.creds` file, the hub is asked who it is
 * and the identity (agent or person) is attached over its own connection, resuming its inbox; without credentials
 * (a hub without auth), `name` is attached, or registered as an agent when it is new. An agent identity accepts
 * every invite; what else arrives waits in its inbox for the model host.
 */
export async function connectIdentity(options: ConnectIdentityOptions): Promise<ConnectedIdentity> {
  const { credsPath } = options;
  if (credsPath === undefined && options.name === undefined) {
    throw new IdentityError('pass the identity: its .creds file, or on a hub without auth its name');
  }
  const agentId = credsPath === undefined ? null : await agentIdOfCredsFile(credsPath);
  const hub = await HubClient.connect({
    ...(options.servers === undefined ? {} : { servers: options.servers }),
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
    ...(credsPath === undefined ? {} : { creds: credsPath }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  try {
    let participant: AgentClient | HumanClient;
    if (agentId !== null && credsPath !== undefined) {
      const passport = await hub.getAgent(agentId);
      participant =
        passport.kind === 'human'
          ? await hub.attachHuman(passport.name, { credsPath })
          : await hub.attach(passport.name, { credsPath });
    } else {
      const name = options.name ?? '';
      const existing = await hub.findAgentId(name);
      const kind = existing === null ? null : (await hub.getAgent(existing)).kind;
      participant = kind === 'human' ? await hub.attachHuman(name) : await hub.attach(name, { passport: { name } });
    }
    const close = (): Promise<void> => hub.close();
    return { participant, close, [Symbol.asyncDispose]: close };
  } catch (err) {
    await hub.close();
    throw err;
  }
}
