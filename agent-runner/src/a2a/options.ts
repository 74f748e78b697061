import { Ag2netError, ErrorCode } from '@ag2net/protocol';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/** How long one call to a remote A2A agent may take before its turn fails with `model_timeout`, in ms: 60 s. */
export const DEFAULT_A2A_TIMEOUT_MS = 60_000;
/** The largest answer a remote A2A agent may give, in UTF-8 bytes, before its turn fails: 256 KiB. */
export const DEFAULT_A2A_MAX_ANSWER_BYTES = 256 * 1024;

/** One header value: literal text, the value of an environment variable, or the content of a file (trimmed). */
const HeaderValueSchema = z.union([
  z.string(),
  z.strictObject({ env: z.string().min(1) }),
  z.strictObject({ file: z.string().min(1) }),
]);
export type HeaderValue = z.infer<typeof HeaderValueSchema>;

/**
 * The `a2a` block of a runner's agent: the agent's turns are taken by calling this A2A endpoint (JSON-RPC binding,
 * `SendStreamingMessage`). The credentials of each call come from here, never from the passport.
 */
export const A2aConfigSchema = z.strictObject({
  /** The agent's JSON-RPC endpoint (the `url` of its card's JSONRPC interface); http or https. */
  url: z.url({ protocol: /^https?$/ }),
  /** Headers sent with every call (`Authorization`, an API key header), each literal, `{ env }` or `{ file }`. */
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'a header name'), HeaderValueSchema).default({}),
  /** How long one call may take, in ms, before the turn fails with `model_timeout`; default 60 000. */
  timeout_ms: z.number().int().min(100).max(3_600_000).default(DEFAULT_A2A_TIMEOUT_MS),
  /** The largest answer, in UTF-8 bytes, before the turn fails with `model_malformed_output`; default 256 KiB. */
  max_answer_bytes: z
    .number()
    .int()
    .min(1)
    .max(16 * 1024 * 1024)
    .default(DEFAULT_A2A_MAX_ANSWER_BYTES),
});
export type A2aConfig = z.infer<typeof A2aConfigSchema>;

/** A header value could not be resolved: its variable is unset or its file unreadable. Code `invalid_config`. */
export class A2aHeaderError extends Ag2netError {
  override readonly name = 'A2aHeaderError';
  constructor(
    readonly header: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(ErrorCode.InvalidConfig, message, options);
  }
}

/** Where `{ file }` paths resolve from, and the environment `{ env }` reads. */
export interface HeaderSources {
  readonly env: NodeJS.ProcessEnv;
  /** Makes a path from the config file absolute. */
  readonly resolvePath: (path: string) => string;
}

/** The headers of `config` with every `{ env }` and `{ file }` read; throws `A2aHeaderError` for a missing one. */
export async function resolveHeaders(
  headers: A2aConfig['headers'],
  sources: HeaderSources,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = await resolveValue(name, value, sources);
  }
  return out;
}

async function resolveValue(name: string, value: HeaderValue, sources: HeaderSources): Promise<string> {
  if (typeof value === 'string') return value;
  if ('env' in value) {
    const found = sources.env[value.env];
    if (found === undefined || found === '') {
      throw new A2aHeaderError(name, `header ${name}: environment variable ${value.env} is not set`);
    }
    return found;
  }
  const path = sources.resolvePath(value.file);
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    throw new A2aHeaderError(name, `header ${name}: cannot read ${path}`, { cause: err });
  }
}
