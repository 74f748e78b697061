import { describe, expect, it } from 'vitest';
import { isLogLevel, stderrLogger } from './log.js';

describe('stderrLogger', () => {
  it('writes one JSON line per record at or above its level, with the error as type and message', () => {
    const lines: string[] = [];
    const log = stderrLogger({ level: 'warn', write: (line) => lines.push(line) });
    log.info({ agent: 'a' }, 'hidden');
    log.warn({ agent: 'a', err: new TypeError('boom') }, 'shown');
    expect(lines).toHaveLength(1);
    const record: unknown = JSON.parse(lines[0] ?? '');
    expect(record).toMatchObject({
      level: 'warn',
      agent: 'a',
      err: { type: 'TypeError', message: 'boom' },
      msg: 'shown',
    });
    expect(JSON.stringify(record)).not.toContain('stack');
  });

  it("child adds its bindings to every line, at the parent's level, and the parent's lines stay without them", () => {
    const lines: string[] = [];
    const log = stderrLogger({ level: 'info', write: (line) => lines.push(line), bindings: { server: 's' } });
    const child = log.child({ agent: 'a' });
    child.debug({}, 'hidden');
    child.info({ channelId: 'c1' }, 'from the child');
    log.info({}, 'from the parent');
    expect(lines.map((line): unknown => JSON.parse(line))).toMatchObject([
      { level: 'info', server: 's', agent: 'a', channelId: 'c1', msg: 'from the child' },
      { level: 'info', server: 's', msg: 'from the parent' },
    ]);
    expect(lines[1]).not.toContain('agent');
  });

  it('knows its levels', () => {
    expect(['debug', 'info', 'warn', 'error', 'silent', 'loud'].map(isLogLevel)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
  });
});
