import { describe, expect, it } from 'vitest';
import { KeyedSerial } from '@ag2net/protocol/internal';

/** A promise and the function that resolves it, so a test decides when a task finishes. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('KeyedSerial', () => {
  it('runs the tasks of one key one at a time, in the order they were queued', async () => {
    const serial = new KeyedSerial();
    const log: string[] = [];
    const first = gate();
    const a = serial.run('c1', async () => {
      log.push('a start');
      await first.promise;
      log.push('a end');
      return 'a';
    });
    const b = serial.run('c1', () => {
      log.push('b');
      return Promise.resolve('b');
    });
    await Promise.resolve();
    expect(log).toEqual(['a start']);
    first.open();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(log).toEqual(['a start', 'a end', 'b']);
  });

  it('runs different keys concurrently', async () => {
    const serial = new KeyedSerial();
    const blocked = gate();
    const slow = serial.run('c1', () => blocked.promise.then(() => 'slow'));
    // c2 finishes while c1 is still waiting: keys do not queue behind each other.
    expect(await serial.run('c2', () => Promise.resolve('fast'))).toBe('fast');
    blocked.open();
    expect(await slow).toBe('slow');
  });

  it('keeps running a key after a task fails, and hands the failure to its caller only', async () => {
    const serial = new KeyedSerial();
    const failed = serial.run('c1', () => Promise.reject(new Error('boom')));
    const next = serial.run('c1', () => Promise.resolve(2));
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe(2);
  });

  it('forgets idle keys and resolves idle() once everything queued has finished', async () => {
    const serial = new KeyedSerial();
    const blocked = gate();
    const done: string[] = [];
    void serial.run('c1', () => blocked.promise.then(() => void done.push('c1')));
    void serial.run('c2', () => Promise.resolve().then(() => void done.push('c2')));
    expect(serial.size).toBe(2);
    const idle = serial.idle().then(() => [...done]);
    blocked.open();
    expect((await idle).sort()).toEqual(['c1', 'c2']);
    await Promise.resolve();
    expect(serial.size).toBe(0);
  });
});
