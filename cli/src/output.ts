import { stripVTControlCharacters, styleText } from 'node:util';
import type { CliIo } from './io.js';

/** The colours the command uses, by meaning. */
export type Tone = 'ok' | 'warn' | 'bad' | 'dim' | 'head' | 'accent';

const STYLE: Record<Tone, Parameters<typeof styleText>[0]> = {
  ok: 'green',
  warn: 'yellow',
  bad: 'red',
  dim: 'gray',
  head: 'bold',
  accent: 'cyan',
};

/** A table column: its header and how to read the cell of one row. */
export interface Column<Row> {
  readonly header: string;
  readonly cell: (row: Row) => string;
  /** The cell's colour, by its row; default none. */
  readonly tone?: (row: Row) => Tone | null;
  /** Cut cells longer than this many characters (with `…`); default no limit. */
  readonly max?: number;
}

/**
 * How results reach the user: tables with colours on a terminal, plain tables when piped or `NO_COLOR` is set, one
 * JSON document (or one JSON line per streamed item) with `--json`. Errors and hints go to standard error.
 */
export class Output {
  readonly json: boolean;
  readonly colour: boolean;

  constructor(
    private readonly io: CliIo,
    options: { readonly json: boolean },
  ) {
    this.json = options.json;
    const noColor = io.env['NO_COLOR'];
    this.colour = io.isTty && !options.json && (noColor === undefined || noColor === '');
  }

  /** `text` in the colour of `tone` when colours are on. */
  paint(tone: Tone, text: string): string {
    // The decision is this class's (the command's terminal may be a test's buffer): no second check by Node.
    return this.colour ? styleText(STYLE[tone], text, { validateStream: false }) : text;
  }

  /** One line of human output (ignored under `--json`, whose output is the data alone). */
  line(text = ''): void {
    if (!this.json) this.io.out(`${text}\n`);
  }

  /** A value as JSON: pretty for a document, one line per item when streaming (`--follow`). */
  data(value: unknown, options: { readonly stream?: boolean } = {}): void {
    this.io.out(`${options.stream === true ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`);
  }

  /** Progress and notes for a person on standard error (also with `--json`, whose data is on standard output alone); silent when not on a terminal. */
  progress(text: string): void {
    if (this.io.isTty) this.io.err(`${this.paint('dim', text)}\n`);
  }

  /**
   * Something a person should act on that did not stop the command, on standard error (on a terminal or not, and
   * with `--json`): `note: <text>`, then `hint: <hint>` when there is one.
   */
  note(text: string, hint?: string): void {
    this.io.err(`${this.paint('warn', `note: ${text}`)}\n`);
    if (hint !== undefined) this.io.err(`hint: ${hint}\n`);
  }

  /** An aligned table; `empty` is printed instead when there are no rows. */
  table<Row>(rows: readonly Row[], columns: readonly Column<Row>[], empty: string): void {
    if (rows.length === 0) {
      this.line(this.paint('dim', empty));
      return;
    }
    const cells = rows.map((row) => columns.map((c) => clipCell(c.cell(row), c.max)));
    const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)));
    const pad = (text: string, i: number): string => text.padEnd(widths[i] ?? 0);
    this.line(
      columns
        .map((c, i) => this.paint('head', pad(c.header.toUpperCase(), i)))
        .join('  ')
        .trimEnd(),
    );
    rows.forEach((row, r) => {
      const line = columns.map((c, i) => {
        const text = pad(cells[r]?.[i] ?? '', i);
        const tone = c.tone?.(row) ?? null;
        return tone === null ? text : this.paint(tone, text);
      });
      this.line(line.join('  ').trimEnd());
    });
  }

  /** `key  value` lines, keys aligned. */
  fields(pairs: readonly (readonly [string, string])[]): void {
    const width = Math.max(...pairs.map(([k]) => k.length));
    for (const [k, v] of pairs) this.line(`${this.paint('dim', k.padEnd(width))}  ${v}`);
  }
}

function clipCell(text: string, max: number | undefined): string {
  const plain = stripVTControlCharacters(text).replace(/\s+/g, ' ');
  if (max === undefined || plain.length <= max) return plain;
  return `${plain.slice(0, Math.max(0, max - 1))}…`;
}
