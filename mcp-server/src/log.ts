import type { Logger } from '@ag2net/client';

export type { Logger };

const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: 100 } as const;
/** A level of `stderrLogger`. */
export type LogLevel = keyof typeof LEVELS;

/** True for a level name `stderrLogger` knows. */
export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(LEVELS, value);
}

/** An error as a log line shows it: its type and message (the stack only at `debug`). */
function errFields(err: unknown, withStack: boolean): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  return {
    type: err.name,
    message: err.message,
    ...(withStack && err.stack !== undefined ? { stack: err.stack } : {}),
  };
}

/**
 * A pino-shaped logger writing one JSON line per record to standard error: standard output carries the MCP stdio
 * protocol and must hold nothing else.
 */
export function stderrLogger(options: {
  readonly level: LogLevel;
  readonly write?: (line: string) => void;
  readonly bindings?: Readonly<Record<string, unknown>>;
}): Logger {
  const threshold = LEVELS[options.level];
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const bindings = options.bindings ?? {};
  const at =
    (level: Exclude<LogLevel, 'silent'>) =>
    (obj: object, msg?: string): void => {
      if (LEVELS[level] < threshold) return;
      const rest: Record<string, unknown> = { ...obj };
      const err = rest['err'];
      delete rest['err'];
      const record = {
        level,
        time: new Date().toISOString(),
        name: 'ag2net-mcp',
        ...bindings,
        ...rest,
        ...(err === undefined ? {} : { err: errFields(err, threshold <= LEVELS.debug) }),
        msg: msg ?? '',
      };
      write(`${JSON.stringify(record)}\n`);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (more) => stderrLogger({ ...options, bindings: { ...bindings, ...more } }),
  };
}
