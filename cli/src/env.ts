import { DEFAULT_PREFIX } from '@ag2net/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { usageError } from './exit.js';
import type { CliIo } from './io.js';
import { Output } from './output.js';
import { Session, resolveTarget, type GlobalOptions, type Purpose, type Target } from './session.js';

/** The global flags as commander hands them over (`optsWithGlobals()`), checked. */
const GlobalOptionsSchema = z.looseObject({
  server: z.string().min(1).optional(),
  prefix: z.string().optional(),
  creds: z.string().min(1).optional(),
  operator: z.boolean().optional(),
  as: z.string().min(1).optional(),
  json: z.boolean().optional(),
  timeout: z.string().optional(),
  authDir: z.string().min(1).optional(),
  credsDir: z.string().min(1).optional(),
});

/** What a command's action works with: the terminal, its output, and the hub connection (opened on first use). */
export class CommandEnv implements AsyncDisposable {
  readonly out: Output;
  readonly #globals: GlobalOptions;
  #target: Promise<Target> | null = null;
  #session: Promise<Session> | null = null;

  constructor(
    readonly io: CliIo,
    command: Command,
  ) {
    this.#globals = GlobalOptionsSchema.parse(command.optsWithGlobals());
    this.out = new Output(io, { json: this.#globals.json === true });
  }

  /** The hub's prefix: `--prefix`, `AG2NET_PREFIX` or `ag2` (checked by whoever uses it). */
  prefix(): string {
    return this.#globals.prefix ?? this.io.env['AG2NET_PREFIX'] ?? DEFAULT_PREFIX;
  }

  /** Where and as whom, from flags and environment. */
  target(): Promise<Target> {
    this.#target ??= resolveTarget(this.#globals, this.io);
    return this.#target;
  }

  /**
   * The hub connection, opened once; `purpose` says which of the stack's credentials it may fall back on when the
   * server asks for some and none were given (see `Purpose`).
   */
  session(purpose: Purpose = 'read'): Promise<Session> {
    this.#session ??= this.target().then((t) => Session.open(t, purpose));
    return this.#session;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    const session = this.#session;
    if (session === null) return;
    await session.then((s) => s.close()).catch(() => undefined);
  }
}

/** Runs one command's body with its environment, closing the connection afterwards whatever happened. */
export async function withEnv(io: CliIo, command: Command, body: (env: CommandEnv) => Promise<void>): Promise<void> {
  await using env = new CommandEnv(io, command);
  await body(env);
}

/**
 * The action of a command without arguments: its own options checked against `schema` (see `optionsOf`), then `body`
 * with its environment, the connection closed afterwards whatever happened (see `withEnv`).
 */
export function action<S extends z.ZodType>(
  io: CliIo,
  schema: S,
  body: (env: CommandEnv, opts: z.output<S>) => Promise<void>,
): (opts: unknown, command: Command) => Promise<void> {
  return (_opts, command) => withEnv(io, command, (env) => body(env, optionsOf(command, schema)));
}

/** `action` of a command with one argument (`<channel>`, `<agent>`, `<task>`), which `body` gets after the env. */
export function actionOn<S extends z.ZodType>(
  io: CliIo,
  schema: S,
  body: (env: CommandEnv, arg: string, opts: z.output<S>) => Promise<void>,
): (arg: string, opts: unknown, command: Command) => Promise<void> {
  return (arg, _opts, command) => withEnv(io, command, (env) => body(env, arg, optionsOf(command, schema)));
}

/** The options of a command that takes none of its own. */
export const NoOptions = z.object({});

/** A command's own options (`command.opts()`), checked against `schema`: a mismatch is a usage error (exit 2). */
export function optionsOf<S extends z.ZodType>(command: Command, schema: S): z.output<S> {
  return schema.parse(command.opts());
}

/** A whole number flag (`--limit 10`), as commander hands it over (a string). */
export const IntFlag = z.coerce.number().int().min(1);

/**
 * Makes `command` (a verb whose work is in its subcommands) refuse to run alone: a usage error (exit 2) that says
 * which subcommand to use (`hint`), or that names the unknown one it was given.
 */
export function needsSubcommand(command: Command, hint: string): Command {
  return command.allowExcessArguments(true).action((_opts: unknown, self: Command) => {
    const [given] = self.args;
    throw usageError(
      given === undefined ? `${self.name()} needs a subcommand` : `unknown command: ${self.name()} ${given}`,
      hint,
    );
  });
}
