import { AuthFile } from '@ag2net/auth';
import { HubClient } from '@ag2net/client';
import { DEFAULT_PREFIX, ErrorCode, OPERATOR_CALLER, PrefixSchema, hubNames, type HubNames } from '@ag2net/protocol';
import { errors, type NatsConnection } from '@nats-io/transport-node';
import { join, resolve } from 'node:path';
import { loadCreds, type LoadedCreds } from './creds.js';
import { CliError, usageError } from './exit.js';
import type { CliIo } from './io.js';
import { resolveAgent } from './resolve.js';
import { StackFiles, identityCredsFile, isFile } from './stack.js';

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
  readonly authDir?: string;
  readonly credsDir?: string;
}

/** Where and as whom the command talks to the hub, resolved from flags and environment. */
export interface Target {
  readonly servers: string;
  readonly prefix: string;
  readonly names: HubNames;
  readonly creds: LoadedCreds | null;
  readonly operator: boolean;
  /** `--as`: the identity to act as (name or id): by its own credentials where the server asks for some. */
  readonly as: string | null;
  readonly timeoutMs: number;
  /** Where `npm start` keeps the stack's files (`--auth-dir`, `AG2NET_AUTH_DIR`, `.data/auth`). */
  readonly stack: StackFiles;
  /** `--creds-dir` or `AG2NET_CREDS_DIR`: where identities' `<name>.creds` are; `null`: where `npm start` keeps them. */
  readonly credsDir: string | null;
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
  const cwd = io.cwd ?? process.cwd();
  const credsDir = options.credsDir ?? emptyToUndefined(io.env['AG2NET_CREDS_DIR']);
  return {
    servers: options.server ?? emptyToUndefined(io.env['NATS_URL']) ?? DEFAULT_SERVER,
    prefix,
    names: hubNames(prefix),
    creds: credsPath === undefined ? null : await loadCreds(credsPath),
    operator: options.operator === true,
    as: options.as ?? null,
    timeoutMs,
    stack: new StackFiles(cwd, options.authDir ?? emptyToUndefined(io.env['AG2NET_AUTH_DIR'])),
    credsDir: credsDir === undefined ? null : resolve(cwd, credsDir),
  };
}

/**
 * What a connection is for, which decides the credentials looked for when the server asks for some and none were
 * given: `read`, an identity's own (`--as`) or the stack's operator caller (public reads, and the operator's reads
 * through the hub); `register`, the stack's registrant (`chat` registers and attaches people).
 */
export type Purpose = 'read' | 'register';

/** Which credentials a session connected with. */
export type CredsSource =
  /** None: a server that asks for none. */
  | 'none'
  /** `--creds` or `NATS_CREDS`. */
  | 'given'
  /** `--as`'s own `<name>.creds`, found where `npm start` keeps them. */
  | 'identity'
  /** The stack's `operator-caller.creds`: public reads and `$operator` calls through the hub, no JetStream. */
  | 'operator-caller'
  /** The stack's `registrant.creds`. */
  | 'registrant';

/** The directory of identities' `<name>.creds` for the target: `--creds-dir`, else where `npm start` keeps them. */
export async function identityCredsDir(target: Target): Promise<string> {
  return target.credsDir ?? target.stack.identityCredsDir(target.servers, target.prefix);
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** An open connection to the hub and the caller the command acts as. */
export class Session implements AsyncDisposable {
  #caller: Promise<string | null> | null = null;

  private constructor(
    readonly target: Target,
    readonly hub: HubClient,
    /** The credentials it connected with: given, found in the stack's files, or none. */
    readonly creds: { readonly source: CredsSource; readonly loaded: LoadedCreds | null },
  ) {}

  get nc(): NatsConnection {
    return this.hub.nc;
  }

  /**
   * Connects to NATS with the target's credentials (the client takes the reply prefix from the JWT) and, with
   * `--operator`, the operator as default caller. When none were given and the server asks for some, connects with
   * the stack's credentials for `purpose` (see `Purpose`); when there are none, the refusal names the files to pass.
   * An unreachable server fails at once.
   */
  static async open(target: Target, purpose: Purpose = 'read'): Promise<Session> {
    if (target.creds !== null) return Session.#connect(target, { source: 'given', loaded: target.creds });
    try {
      return await Session.#connect(target, { source: 'none', loaded: null });
    } catch (err) {
      if (!asksForCredentials(err)) throw err;
    }
    const found = await findStackCreds(target, purpose);
    if (found === null) throw await noCredentials(target, purpose);
    const expiresAt = found.loaded?.expiresAt ?? null;
    if (found.source === 'identity' && expiresAt !== null && expiresAt.getTime() <= Date.now()) {
      // The hub renews an identity's credentials while it is attached; a file left behind expires within the hour.
      const name = target.as ?? '<name>';
      throw new CliError(
        `the credentials of ${name} at ${target.stack.shown(found.loaded?.path ?? '')} expired at ${expiresAt.toISOString()}`,
        ErrorCode.AccessDenied,
        {
          hint: `\`ag2net chat <agent> --as ${name}\` attaches ${name} again and renews them; --operator reads as the operator`,
        },
      );
    }
    return Session.#connect(target, found);
  }

  static async #connect(target: Target, creds: Session['creds']): Promise<Session> {
    const hub = await HubClient.connect({
      servers: target.servers,
      prefix: target.prefix,
      retryForMs: target.timeoutMs,
      operator: target.operator,
      ...(creds.loaded === null ? {} : { creds: creds.loaded.text }),
    });
    return new Session(target, hub, creds);
  }

  /** Whether the connection carries credentials: the server is secured, and identities need their own. */
  get secured(): boolean {
    return this.creds.loaded !== null;
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
    if (this.creds.source === 'operator-caller' && !this.target.operator && this.target.as !== null) {
      const file = identityCredsFile(await identityCredsDir(this.target), this.target.as);
      throw new CliError(
        `no credentials of ${this.target.as} at ${this.target.stack.shown(file)}`,
        ErrorCode.AccessDenied,
        {
          hint: `pass its .creds with --creds <file>, or --creds-dir <the directory of ${this.target.as}.creds>; --operator reads as the operator`,
        },
      );
    }
    const caller = await this.caller();
    if (caller !== null) return caller;
    throw usageError(
      `${what} needs to know who is asking`,
      this.secured
        ? `pass --operator (every channel), --as <name> (an identity whose <name>.creds is in ${this.target.stack.shown(await identityCredsDir(this.target))}), or --creds <identity .creds>`
        : 'pass --operator, --as <agent> (name or id), or --creds <identity .creds>',
    );
  }

  /** The operator caller; without `--operator` an access refusal (exit 4) that names the flag. */
  requireOperator(what: string): string {
    if (this.target.operator) return OPERATOR_CALLER;
    throw new CliError(`${what} is for operators`, ErrorCode.AccessDenied, {
      hint: `pass --operator (with --creds ${this.target.stack.shown(this.target.stack.adminCreds)} on a secured hub)`,
    });
  }

  /**
   * The operator caller for a command that reads the streams over JetStream (`tail`, `audit --follow`): only the
   * admin's credentials may, never the operator caller's, whose refusal names `admin.creds`.
   */
  requireJetStream(what: string): string {
    const caller = this.requireOperator(what);
    if (this.creds.source === 'operator-caller') {
      throw new CliError(
        `${what} reads JetStream, which ${AuthFile.operatorCallerCreds} may not`,
        ErrorCode.AccessDenied,
        {
          hint: `pass --creds ${this.target.stack.shown(this.target.stack.adminCreds)} (the admin's credentials)`,
        },
      );
    }
    return caller;
  }

  /** The agent id of a name, an id or a unique prefix of one (public lookup); `not_found` when nobody has it. */
  async agentId(nameOrId: string): Promise<string> {
    const passport = await resolveAgent(this.hub, nameOrId);
    if (passport.agent_id === null) throw usageError(`${nameOrId} has no agent id`);
    return passport.agent_id;
  }

  async #resolveCaller(): Promise<string | null> {
    if (this.target.operator) return OPERATOR_CALLER;
    if (this.target.as !== null) return this.agentId(this.target.as);
    return this.creds.loaded?.agentId ?? null;
  }

  async close(): Promise<void> {
    await this.hub.close({ graceMs: 0 });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** Whether NATS refused a connection without credentials: the server asks for some. */
function asksForCredentials(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    if (e instanceof errors.AuthorizationError) return true;
  }
  return false;
}

/** The stack's credentials for `purpose`, when its files hold them. */
async function findStackCreds(target: Target, purpose: Purpose): Promise<Session['creds'] | null> {
  const { stack } = target;
  const candidates: [CredsSource, string][] =
    purpose === 'register'
      ? [['registrant', stack.registrantCreds]]
      : [
          ...(target.as !== null && !target.operator
            ? [['identity', identityCredsFile(await identityCredsDir(target), target.as)] as [CredsSource, string]]
            : []),
          ['operator-caller', stack.operatorCallerCreds],
        ];
  for (const [source, path] of candidates) {
    if (await isFile(path)) return { source, loaded: await loadCreds(path) };
  }
  return null;
}

/** The refusal of a server that asks for credentials when none were given nor found: which files to pass. */
async function noCredentials(target: Target, purpose: Purpose): Promise<CliError> {
  const { stack } = target;
  const looked = purpose === 'register' ? stack.registrantCreds : stack.operatorCallerCreds;
  // Where npm start would keep an identity's credentials, when this is its directory; else what that place is called.
  const identities =
    target.credsDir !== null || (await stack.hasCredsDir())
      ? stack.shown(await identityCredsDir(target))
      : join('.data', 'creds', '<server>', '<prefix>');
  const hint =
    purpose === 'register'
      ? `pass --creds <the stack's registrant.creds> (${stack.shown(stack.registrantCreds)} where npm start ran), or --auth-dir <its .data/auth>`
      : `pass --creds ${stack.shown(stack.adminCreds)} with --operator to read everything, or an identity's own ` +
        `--creds ${identities}/<name>.creds; from another directory, --auth-dir <the stack's .data/auth>`;
  return new CliError(
    `the server asks for credentials: none were given (--creds, NATS_CREDS) and there is no ${stack.shown(looked)}`,
    ErrorCode.AccessDenied,
    { hint },
  );
}
