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
