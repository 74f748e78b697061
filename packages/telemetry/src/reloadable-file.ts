import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '@ag2net/protocol/internal';

/** Debounce of `ReloadableFile.watch`, in ms: how long changes must settle before the file is read. */
export const DEFAULT_RELOAD_DEBOUNCE_MS = 50;

/** What a watched file reports to: `info` and `warn` of the ag2net `Logger` (pino's is one). */
export type ReloadLogger = Pick<Logger, 'info' | 'warn'>;

/** What one `ReloadableFile.reload()` did. */
export type FileReload =
  /** The file holds a new value, which replaced the previous one. */
  | { readonly outcome: 'reloaded' }
  /** The file holds the value held already, or fails as it did when last read. */
  | { readonly outcome: 'unchanged' }
  /** The file cannot be read or parsed now (`reason`, for the person editing it): the previous value stays. */
  | { readonly outcome: 'kept'; readonly reason: string };

/** Options of `reloadableFile`. */
export interface ReloadableFileOptions<T> {
  readonly path: string;
  /** The value the service started with (read from the file at start). */
  readonly initial: T;
  /**
   * The value of a version of the file. Throws, with a message for the person editing the file, when that version
   * cannot be used. Values are compared as JSON: a version that parses to the value held is no change.
   */
  readonly parse: (text: string) => T;
  /** Told each new value, once `value` is it. */
  readonly onReload?: (value: T) => void;
  /** How log lines name the file and what they say of it. */
  readonly describe: {
    /** What the file is: `<path> is not a valid <kind>; keeping the previous <held>`, `cannot watch the <kind> …`. */
    readonly kind: string;
    /** What the service keeps when a version cannot be used. */
    readonly held: string;
    /** The `info` line of a reload: its fields (beside `file`) and message. */
    readonly reloaded: (value: T) => readonly [fields: object, message: string];
  };
}

/**
 * A file a service reads at start and again while it runs (API keys, people): `value` is its last version that could
 * be used, so that an edit takes effect without a restart and a broken edit changes nothing.
 */
export interface ReloadableFile<T> {
  readonly path: string;
  /** The value of the last version of the file that parsed. */
  readonly value: T;
  /** Reads the file again; reads run one after another, so a slow one never lands after a newer one. */
  reload(): Promise<FileReload>;
  /**
   * Reloads on every change of the file until the returned handle is disposed: one `info` line per new value, one
   * `warn` line naming the file per way a version of it fails. The directory is watched, so a file replaced by a
   * rename (an atomic write) is followed too. Changes are read once they settle for `debounceMs` (default
   * `DEFAULT_RELOAD_DEBOUNCE_MS`).
   */
  watch(log: ReloadLogger, options?: { readonly debounceMs?: number }): Disposable;
}

/** A `ReloadableFile` holding `initial`; no I/O until `reload()` or `watch()`. */
export function reloadableFile<T>(options: ReloadableFileOptions<T>): ReloadableFile<T> {
  const { path } = options;
  let value = options.initial;
  let held = JSON.stringify(value);
  // The reason the last read failed, until one succeeds: a file that stays broken is reported once.
  let failing: string | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  const readAgain = async (): Promise<FileReload> => {
    let next: T;
    try {
      next = options.parse(await readFile(path, 'utf8'));
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (reason === failing) return { outcome: 'unchanged' };
      failing = reason;
      return { outcome: 'kept', reason };
    }
    failing = null;
    const text = JSON.stringify(next);
    if (text === held) return { outcome: 'unchanged' };
    [value, held] = [next, text];
    options.onReload?.(next);
    return { outcome: 'reloaded' };
  };
  const file: ReloadableFile<T> = {
    path,
    get value() {
      return value;
    },
    reload: () => {
      const done = queue.then(readAgain);
      queue = done.catch(() => undefined);
      return done;
    },
    watch: (log, watchOptions = {}) =>
      watchFile(file, options.describe, { log, debounceMs: watchOptions.debounceMs ?? DEFAULT_RELOAD_DEBOUNCE_MS }),
  };
  return file;
}

function watchFile<T>(
  file: ReloadableFile<T>,
  describe: ReloadableFileOptions<T>['describe'],
  options: { readonly log: ReloadLogger; readonly debounceMs: number },
): Disposable {
  const { log } = options;
  const name = basename(file.path);
  let timer: NodeJS.Timeout | null = null;
  let watcher: FSWatcher | null = null;
  const reload = (): void => {
    timer = null;
    // Fire-and-forget: what the reload did is logged here, a failure too.
    void file.reload().then(
      (r) => {
        if (r.outcome === 'reloaded') {
          const [fields, message] = describe.reloaded(file.value);
          log.info({ file: file.path, ...fields }, message);
        } else if (r.outcome === 'kept') {
          log.warn(
            { file: file.path, reason: r.reason },
            `${file.path} is not a valid ${describe.kind}; keeping the previous ${describe.held}`,
          );
        }
      },
      (err: unknown) => log.warn({ file: file.path, err }, `reloading the ${describe.kind} failed`),
    );
  };
  try {
    watcher = watch(dirname(file.path), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) return;
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(reload, options.debounceMs);
    });
    watcher.on('error', (err) => log.warn({ file: file.path, err }, `cannot watch the ${describe.kind} any longer`));
  } catch (err) {
    log.warn({ file: file.path, err }, `cannot watch the ${describe.kind}: changes need a restart`);
  }
  return {
    [Symbol.dispose]: () => {
      if (timer !== null) clearTimeout(timer);
      watcher?.close();
    },
  };
}
