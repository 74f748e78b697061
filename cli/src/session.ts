import { HubClient } from '@ag2net/client';
import { DEFAULT_PREFIX, OPERATOR_CALLER, PrefixSchema, hubNames, type HubNames } from '@ag2net/protocol';
import type { NatsConnection } from '@nats-io/transport-node';
import { loadCreds, type LoadedCreds } from './creds.js';
import { CliError, ExitCode, usageError } from './exit.js';
import type { CliIo } from './io.js';

/** The default NATS URL when neither `--server` nor `NATS_URL` is given. */
export const DEFAULT_SERVER = 'nats://127.0.0.1:4222';
/** How long a command keeps retrying when no hub answers, in ms (`--timeout`). */
export const DEFAULT_TIMEOUT_MS = 5_000;

/** The global flags, as commander parsed them. */
export interface GlobalOptions {
  readonly server?: string;
  readonly prefix?: string;
  readonly creds?: string;
  readonly operator?: boolean;
  readonly as?: string;
  readonly json?: boolean;
  readonly timeout?: string;
}

/** Where and as whom the command talks to the hub, resolved from flags and environment. */
export interface Target {
  readonly servers: string;
  readonly prefix: string;
  readonly names: HubNames;
  readonly creds: LoadedCreds | null;
  readonly operator: boolean;
  /** `--as`: the identity to act as on a hub without auth (name or id). */
  readonly as: string | null;
  readonly timeoutMs: number;
}

/** Flags first, then `NATS_URL`, `NATS_CREDS`, `AG2NET_PREFIX`, then the defaults. */
export async function resolveTarget(options: GlobalOptions, io: CliIo): Promise<Target> {
  const prefix = options.prefix ?? io.env['AG2NET_PREFIX'] ?? DEFAULT_PREFIX;
  if (!PrefixSchema.safeParse(prefix).success) {
    throw usageError(`invalid prefix ${JSON.stringify(prefix)}`, 'a prefix holds letters, digits, "_" and "-" only');
  }
  const timeoutMs = options.timeout === undefined ? DEFAULT_TIMEOUT_MS : Number(options.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw usageError(`--timeout must be a positive number of milliseconds, got ${options.timeout}`);
  }
  const credsPath = options.creds ?? emptyToUndefined(io.env['NATS_CREDS']);
  return {
    servers: options.server ?? emptyToUndefined(io.env['NATS_URL']) ?? DEFAULT_SERVER,
    prefix,
    names: hubNames(prefix),
    creds: credsPath === undefined ? null : await loadCreds(credsPath),
    operator: options.operator === true,
    as: options.as ?? null,
    timeoutMs,
  };
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** An open connection to the hub and the caller the command acts as. */
export class Session implements AsyncDisposable {
  #caller: Promise<string | null> | null = null;

  private constructor(
    readonly target: Target,
    readonly nc: NatsConnection,
    readonly hub: HubClient,
  ) {}

  /**
   * Connects to NATS with the target's credentials (the client takes the reply prefix from the JWT) and, with
   * `--operator`, the operator as default caller. An unreachable server fails at once.
   */
  static async open(target: Target): Promise<Session> {
    const hub = await HubClient.connect({
      servers: target.servers,
      prefix: target.prefix,
      retryForMs: target.timeoutMs,
      operator: target.operator,
      ...(target.creds === null ? {} : { creds: target.creds.text }),
    });
    return new Session(target, hub.nc, hub);
  }

  get names(): HubNames {
    return this.target.names;
  }

  /**
   * Who reads: the operator with `--operator`, else the identity of `--as` (by name or id), else the identity the
   * credentials were issued to; `null` when none is known.
   */
  caller(): Promise<string | null> {
    this.#caller ??= this.#resolveCaller();
    return this.#caller;
  }

  /** The caller, or a usage error that says how to name one. */
  async requireCaller(what: string): Promise<string> {
    const caller = await this.caller();
    if (caller !== null) return caller;
    throw usageError(
      `${what} needs to know who is asking`,
      'pass --operator (with admin.creds on a secured hub), --creds <identity .creds>, or --as <agent> on a hub without auth',
    );
  }

  /** The operator caller; without `--operator` an access refusal (exit 4) that names the flag. */
  requireOperator(what: string): string {
    if (this.target.operator) return OPERATOR_CALLER;
    throw new CliError(`${what} is for operators`, ExitCode.AccessDenied, {
      hint: 'pass --operator (with --creds admin.creds on a secured hub)',
    });
  }

  /** The agent id of a name or id (public lookup); `not_found` when nobody has it. */
  async agentId(nameOrId: string): Promise<string> {
    const passport = await this.hub.getAgent(nameOrId);
    if (passport.agent_id === null) throw usageError(`${nameOrId} has no agent id`);
    return passport.agent_id;
  }

  async #resolveCaller(): Promise<string | null> {
    if (this.target.operator) return OPERATOR_CALLER;
    if (this.target.as !== null) return this.agentId(this.target.as);
    return this.target.creds?.agentId ?? null;
  }

  async close(): Promise<void> {
    await this.hub.close({ graceMs: 0 });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
