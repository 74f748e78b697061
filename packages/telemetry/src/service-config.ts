import { Ag2netError, ErrorCode } from '@ag2net/protocol';
import { formatIssues } from '@ag2net/protocol/internal';
import { parseArgs } from 'node:util';
import type { z } from 'zod';

/**
 * Thrown on bad flags, environment or files; the message is meant for the person starting the service. Code
 * `invalid_config`.
 */
export class ConfigError extends Ag2netError {
  override readonly name = 'ConfigError';
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.InvalidConfig, message, options);
  }
}

/** Where each configuration key comes from: its command-line flag (without `--`) and its environment variable. */
export type ConfigSources = Readonly<Record<string, readonly [flag: string, envName: string]>>;

/** What `readServiceConfig` needs to know of one service. */
export interface ServiceConfigSpec<T> {
  readonly sources: ConfigSources;
  /** Keys that are on/off switches (`--flag` without a value); every other key takes a string. */
  readonly switches: ReadonlySet<string>;
  /** Parses the raw strings (coercing numbers and booleans) into the configuration. */
  readonly schema: z.ZodType<T>;
  /** Appended to a message about unknown or malformed flags. */
  readonly usage: string;
}

/**
 * Reads a service's configuration: a flag wins over its environment variable, an empty value counts as unset, and
 * unset keys take the schema's defaults. `--help` returns `'help'`. Every problem is a `ConfigError` naming the flag
 * and variable of each bad value.
 */
export function readServiceConfig<T>(
  spec: ServiceConfigSpec<T>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): T | 'help' {
  const options: Record<string, { type: 'string' | 'boolean' }> = { help: { type: 'boolean' } };
  for (const [key, [flag]] of Object.entries(spec.sources)) {
    options[flag] = { type: spec.switches.has(key) ? 'boolean' : 'string' };
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options, strict: true }).values;
  } catch (err) {
    throw new ConfigError(`${err instanceof Error ? err.message : String(err)}\n\n${spec.usage}`);
  }
  if (values['help'] === true) return 'help';
  const raw: Record<string, string> = {};
  for (const [key, [flag, name]] of Object.entries(spec.sources)) {
    const given = values[flag];
    // A switch on the command line is `true`; off, it leaves the environment variable to decide.
    const fromFlag = given === true ? 'true' : given;
    const value = [fromFlag, env[name]].find((v): v is string => typeof v === 'string' && v !== '');
    if (value !== undefined) raw[key] = value;
  }
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) {
    const describePath = (path: readonly PropertyKey[]): string => describeConfigSource(spec.sources, path);
    throw new ConfigError(formatIssues('invalid configuration', parsed.error.issues, { layout: 'list', describePath }));
  }
  return parsed.data;
}

/** How a message names a configuration key: `--<flag> (<ENV_NAME>)`, or the key itself when it has no source. */
export function describeConfigSource(sources: ConfigSources, path: readonly PropertyKey[]): string {
  const key = String(path[0]);
  const source = sources[key];
  return source === undefined ? key : `--${source[0]} (${source[1]})`;
}
