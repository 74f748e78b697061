import {
  HubClient,
  ackInvite,
  isInviteFor,
  type AgentClient,
  type AgentHandler,
  type HumanClient,
  type Logger,
} from '@ag2net/client';
import { Ag2netError, ErrorCode, IdSchema, type Envelope } from '@ag2net/protocol';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
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
  /**
   * The identity's name when `credsPath` holds no identity's credentials: the registrant's (a secured hub) or none
   * (a hub without auth). The name is registered as an agent when it is new, as the SDK's `attach` does.
   */
  readonly name?: string;
  /** The admission key sent with a registration (passport auth, scheme `api_key`). Default none. */
  readonly apiKey?: string;
  /**
   * Where a registered identity's credentials are kept as `<name>.creds` (0600) and found again on the next start:
   * needed with the registrant's `credsPath`, since the registrant cannot reach an identity without them.
   */
  readonly credsDir?: string;
  /** pino-compatible logger; default silent. */
  readonly logger?: Logger;
  /**
   * Told every delivery from someone else as it is handled, from the first one on (those that waited while the
   * identity was away included), before it is acked. Must not throw. Default none.
   */
  readonly onEnvelope?: (envelope: Envelope) => void;
}

/** The identity could not be reached with what it was given (a `.creds` file unreadable or malformed). Code `invalid_config`. Local. */
export class IdentityError extends Ag2netError {
  override readonly name = 'IdentityError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.InvalidConfig, message, options);
  }
}

/** A connected identity: the participant and the hub client it was reached through (closed together). */
export interface ConnectedIdentity extends AsyncDisposable {
  readonly participant: AgentClient | HumanClient;
  /** Disconnects the participant and closes every connection. Idempotent. */
  close(): Promise<void>;
}

const ClaimsSchema = z.looseObject({
  name: z.string().optional(),
  nats: z.looseObject({ pub: z.looseObject({ allow: z.array(z.string()).optional() }).optional() }).optional(),
});

/**
 * The agent id an identity's `.creds` file is for (its JWT's `name`); `null` for other users' credentials (the
 * registrant's, an operator's). `IdentityError` when the file cannot be read or is no `.creds` file.
 */
export async function agentIdOfCredsFile(path: string): Promise<string | null> {
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
  const parsed = ClaimsSchema.safeParse(claims);
  if (!parsed.success) return null;
  const agentId = IdSchema.safeParse(parsed.data.name);
  if (!agentId.success) return null;
  // An identity's JWT is named after its agent id and may pull from that agent's inbox consumer; the registrant's and
  // the operators' are named too, but may not.
  const pulls = parsed.data.nats?.pub?.allow ?? [];
  return pulls.some((subject) => subject.endsWith(`.agent_${agentId.data}`)) ? agentId.data : null;
}

/**
 * Reaches one identity of the network as the SDK attaches to it. With an identity's `.creds` file, the hub is asked
 * who it is and the identity (agent or person) is attached over its own connection, resuming its inbox. With the
 * registrant's credentials and `name`, the identity kept in `credsDir` is attached, or the name registered as an
 * agent (with `apiKey`) when it is new; on a hub without auth, `name` alone. An agent identity accepts every invite;
 * what else arrives waits in its inbox for the model host.
 */
export async function connectIdentity(options: ConnectIdentityOptions): Promise<ConnectedIdentity> {
  const kept =
    options.name === undefined || options.credsDir === undefined
      ? undefined
      : join(options.credsDir, `${options.name}.creds`);
  // Credentials of the identity kept from an earlier start: attach with them directly.
  if (kept !== undefined && (await isFile(kept))) return attachWithCreds(options, kept);
  const agentId = options.credsPath === undefined ? null : await agentIdOfCredsFile(options.credsPath);
  if (agentId !== null && options.credsPath !== undefined) return attachWithCreds(options, options.credsPath);
  const { name } = options;
  if (name === undefined) {
    throw new IdentityError(
      options.credsPath === undefined
        ? "pass the identity: its .creds file, or the registrant's .creds with a name to register"
        : `${options.credsPath} holds no identity's credentials: pass a name to register one with them`,
    );
  }
  if (options.credsPath !== undefined && kept === undefined) {
    throw new IdentityError(`registering ${name} with ${options.credsPath} needs a directory to keep its credentials`);
  }
  if (options.credsDir !== undefined) await mkdir(options.credsDir, { recursive: true, mode: 0o700 });
  const handler = agentHandler(options);
  const hub = await connectHub(options, options.credsPath);
  return within(hub, async () => {
    const auth = options.apiKey === undefined ? {} : { auth: { scheme: 'api_key', claim: { token: options.apiKey } } };
    const passport = { name, ...auth };
    if (options.credsPath !== undefined) {
      return hub.attach(name, { passport, handler, ...(kept === undefined ? {} : { credsPath: kept }) });
    }
    // A hub without auth: the name may be a person's already.
    const existing = await hub.findAgentId(name);
    const kind = existing === null ? null : (await hub.getAgent(existing)).kind;
    return kind === 'human' ? told(await hub.attachHuman(name), options) : hub.attach(name, { passport, handler });
  });
}

/** Attaches the identity of `credsPath` (an agent or a person) over a connection made with those credentials. */
async function attachWithCreds(options: ConnectIdentityOptions, credsPath: string): Promise<ConnectedIdentity> {
  const agentId = await agentIdOfCredsFile(credsPath);
  if (agentId === null) throw new IdentityError(`${credsPath} holds no identity's credentials`);
  const hub = await connectHub(options, credsPath);
  return within(hub, async () => {
    const passport = await hub.getAgent(agentId);
    return passport.kind === 'human'
      ? told(await hub.attachHuman(passport.name, { credsPath }), options)
      : hub.attach(passport.name, { credsPath, handler: agentHandler(options) });
  });
}

/** An agent's handler: accepts every invite and tells `onEnvelope` what others sent. */
function agentHandler(options: ConnectIdentityOptions): AgentHandler {
  const tell = options.onEnvelope;
  return async (envelope, self) => {
    if (isInviteFor(self, envelope)) await ackInvite(self, envelope);
    if (envelope.sender_id !== self.agentId) tell?.(envelope);
  };
}

/**
 * A person's client with `onEnvelope` told what others send. A person's client starts consuming as it attaches, so
 * a delivery handled before this runs is not told (the hub keeps it in the channel's log all the same).
 */
function told(human: HumanClient, options: ConnectIdentityOptions): HumanClient {
  const tell = options.onEnvelope;
  if (tell !== undefined) {
    human.onEnvelope((envelope) => {
      if (envelope.sender_id !== human.agentId) tell(envelope);
    });
  }
  return human;
}

function connectHub(options: ConnectIdentityOptions, credsPath: string | undefined): Promise<HubClient> {
  return HubClient.connect({
    ...(options.servers === undefined ? {} : { servers: options.servers }),
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
    ...(credsPath === undefined ? {} : { creds: credsPath }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}

/** The identity `attach` reaches on `hub`; the hub client is closed when that fails. */
async function within(hub: HubClient, attach: () => Promise<AgentClient | HumanClient>): Promise<ConnectedIdentity> {
  try {
    const participant = await attach();
    const close = (): Promise<void> => hub.close();
    return { participant, close, [Symbol.asyncDispose]: close };
  } catch (err) {
    await hub.close();
    throw err;
  }
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}
