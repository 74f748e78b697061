import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installCrashPolicy } from './crash-policy.js';

function setup(close: () => Promise<unknown>) {
  const target = new EventEmitter();
  const lines: { level: string; obj: object; msg: string }[] = [];
  const log = {
    fatal: (obj: object, msg: string) => lines.push({ level: 'fatal', obj, msg }),
    error: (obj: object, msg: string) => lines.push({ level: 'error', obj, msg }),
  };
  const exits: number[] = [];
  let exited: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    exited = resolve;
  });
  const exit = (code: number) => {
    exits.push(code);
    exited();
  };
  installCrashPolicy({ log, close, exit, target, closeTimeoutMs: 1000 });
  return { target, lines, exits, done };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('installCrashPolicy', () => {
  it('logs one short line, closes, and exits 1 on an unhandled rejection', async () => {
    const close = vi.fn(() => Promise.resolve());
    const { target, lines, exits, done } = setup(close);
    target.emit('unhandledRejection', new RangeError('x'.repeat(10_000)));
    await done;
    expect(close).toHaveBeenCalledTimes(1);
    expect(exits).toEqual([1]);
    expect(lines).toEqual([
      {
        level: 'fatal',
        obj: { event: 'unhandledRejection', reason: `RangeError: ${'x'.repeat(187)}…` },
        msg: 'crashed; closing and exiting',
      },
    ]);
  });

  it('exits 1 after the time bound when close hangs, and closes once on a second failure', async () => {
    vi.useFakeTimers();
    const close = vi.fn(() => new Promise<never>(() => undefined));
    const { target, lines, exits, done } = setup(close);
    target.emit('uncaughtException', new Error('boom'));
    target.emit('unhandledRejection', 'again');
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    await done;
    expect(exits).toEqual([1]);
    expect(close).toHaveBeenCalledTimes(1);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['fatal', 'crashed; closing and exiting'],
      ['error', 'another failure while closing after a crash'],
    ]);
  });

  it('exits 1 when close itself fails', async () => {
    const { target, exits, done } = setup(() => Promise.reject(new Error('no')));
    target.emit('uncaughtException', new Error('boom'));
    await done;
    expect(exits).toEqual([1]);
  });
});
