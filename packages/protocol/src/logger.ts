/**
 * The narrow, pino-compatible logger every ag2net library writes to (pino's `Logger` is one). Libraries never create a
 * root logger: they take one in their options, default `silentLogger`, and log through `child` with their bindings.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /** A logger that adds `bindings` to every record it writes. */
  child(bindings: object): Logger;
}

const noop = (): void => undefined;

/** A logger that drops everything: the default. */
export const silentLogger: Logger = {
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  child: () => silentLogger,
};
