import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from './io.js';
import { Output } from './output.js';

function io(env: Record<string, string>, isTty: boolean): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    io: {
      out: (t) => void (out += t),
      err: (t) => void (err += t),
      lines: () => Readable.from([]),
      env,
      isTty,
      signal: new AbortController().signal,
    },
    out: () => out,
    err: () => err,
  };
}

const rows = [
  { name: 'alice', state: 'active' },
  { name: 'bartholomew', state: 'closed' },
];
const columns = [
  { header: 'name', cell: (r: (typeof rows)[number]) => r.name },
  { header: 'state', cell: (r: (typeof rows)[number]) => r.state, tone: () => 'ok' as const },
];

describe('Output', () => {
  it('aligns a table without colour when standard output is not a terminal', () => {
    const t = io({}, false);
    new Output(t.io, { json: false }).table(rows, columns, 'none');
    expect(t.out()).toBe('NAME         STATE\nalice        active\nbartholomew  closed\n');
  });

  it('colours on a terminal, and not when NO_COLOR is set', () => {
    const coloured = io({}, true);
    new Output(coloured.io, { json: false }).table(rows, columns, 'none');
    expect(coloured.out()).toContain('\u001b[32mactive');
    const plain = io({ NO_COLOR: '1' }, true);
    new Output(plain.io, { json: false }).table(rows, columns, 'none');
    expect(plain.out()).not.toContain('\u001b[');
  });

  it('prints the data alone under --json: no table lines, one line per streamed item', () => {
    const t = io({}, true);
    const o = new Output(t.io, { json: true });
    o.line('ignored');
    o.table(rows, columns, 'none');
    o.data({ a: 1 }, { stream: true });
    o.data([1]);
    expect(t.out()).toBe('{"a":1}\n[\n  1\n]\n');
  });

  it('cuts long cells and flattens line breaks', () => {
    const t = io({}, false);
    new Output(t.io, { json: false }).table(
      [{ text: 'one\ntwo three four' }],
      [{ header: 'text', cell: (r) => r.text, max: 8 }],
      '',
    );
    expect(t.out()).toBe('TEXT\none two…\n');
  });

  it('writes progress to standard error on a terminal only', () => {
    const tty = io({ NO_COLOR: '1' }, true);
    new Output(tty.io, { json: true }).progress('working');
    const pipe = io({}, false);
    new Output(pipe.io, { json: false }).progress('working');
    expect([tty.err(), tty.out(), pipe.err()]).toEqual(['working\n', '', '']);
  });
});
