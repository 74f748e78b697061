/**
 * Golden wire fixtures, discovered mechanically: `fixtures/<TypeName>/*.json` must parse with
 * `WIRE_SCHEMAS[TypeName]`, `fixtures/<TypeName>/invalid/*.json` must not, and `Envelope/ag2-*.json` hold
 * envelopes exactly as AG2 writes them, which `encodeAg2Envelope` must reproduce byte for byte.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EnvelopeSchema, WIRE_SCHEMAS, encodeAg2Envelope } from '@ag2net/protocol';
import type { WireTypeName } from '@ag2net/protocol';

const FIXTURES_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));
const INVALID = 'invalid';
const AG2_PREFIX = 'ag2-';

/** The 14 fields of AG2's `Envelope` dataclass, sorted as `json.dumps(sort_keys=True)` writes them. */
const AG2_ENVELOPE_KEYS = [
  'audience',
  'causation_id',
  'channel_id',
  'created_at',
  'depth',
  'envelope_id',
  'event_data',
  'event_type',
  'idempotency_key',
  'priority',
  'sender_id',
  'task_id',
  'trace_id',
  'ttl_seconds',
];

function isWireTypeName(name: string): name is WireTypeName {
  return Object.hasOwn(WIRE_SCHEMAS, name);
}

function listDir(dir: string): { files: string[]; dirs: string[] } {
  const entries = readdirSync(dir, { withFileTypes: true });
  return {
    files: entries
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort(),
    dirs: entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort(),
  };
}

function readJson(path: string): { text: string; json: unknown } {
  const text = readFileSync(path, 'utf8');
  const json: unknown = JSON.parse(text);
  return { text, json };
}

interface Folder {
  readonly name: string;
  readonly valid: readonly string[];
  readonly invalid: readonly string[];
  /** Entries that are neither `*.json` nor the `invalid/` folder. */
  readonly strays: readonly string[];
}

function readFolder(name: string): Folder {
  const { files, dirs } = listDir(join(FIXTURES_DIR, name));
  const invalidDir = dirs.includes(INVALID) ? listDir(join(FIXTURES_DIR, name, INVALID)) : { files: [], dirs: [] };
  return {
    name,
    valid: files.filter((f) => f.endsWith('.json')),
    invalid: invalidDir.files.filter((f) => f.endsWith('.json')),
    strays: [
      ...files.filter((f) => !f.endsWith('.json')),
      ...dirs.filter((d) => d !== INVALID).map((d) => `${d}/`),
      ...invalidDir.files.filter((f) => !f.endsWith('.json')).map((f) => `${INVALID}/${f}`),
      ...invalidDir.dirs.map((d) => `${INVALID}/${d}/`),
    ].map((entry) => `${name}/${entry}`),
  };
}

const folders = listDir(FIXTURES_DIR).dirs.map(readFolder);

describe('fixture folders', () => {
  it('each name a WIRE_SCHEMAS entry (a fixture without a schema fails)', () => {
    expect(folders.map((f) => f.name).filter((name) => !isWireTypeName(name))).toEqual([]);
  });

  it('exist for every WIRE_SCHEMAS entry', () => {
    const present = new Set(folders.map((f) => f.name));
    expect(Object.keys(WIRE_SCHEMAS).filter((name) => !present.has(name))).toEqual([]);
  });

  it('hold at least one valid fixture each', () => {
    expect(folders.filter((f) => f.valid.length === 0).map((f) => f.name)).toEqual([]);
  });

  it('hold only *.json files and an invalid/ folder of *.json files', () => {
    expect(folders.flatMap((f) => f.strays)).toEqual([]);
  });

  it('keep AG2 byte-compatibility fixtures (ag2-*.json) under Envelope only', () => {
    const misplaced = folders
      .filter((f) => f.name !== 'Envelope')
      .flatMap((f) => f.valid.filter((file) => file.startsWith(AG2_PREFIX)).map((file) => `${f.name}/${file}`));
    expect(misplaced).toEqual([]);
  });
});

for (const folder of folders.filter((f) => isWireTypeName(f.name))) {
  const name = folder.name;
  if (!isWireTypeName(name)) continue;
  const schema = WIRE_SCHEMAS[name];

  describe(`${name} fixtures`, () => {
    it.each(folder.valid)('%s parses', (file) => {
      const { json } = readJson(join(FIXTURES_DIR, name, file));
      const result = schema.safeParse(json);
      expect(result.error?.issues ?? []).toEqual([]);
    });

    if (folder.invalid.length > 0) {
      it.each(folder.invalid)(`${INVALID}/%s fails to parse`, (file) => {
        const { json } = readJson(join(FIXTURES_DIR, name, INVALID, file));
        expect(schema.safeParse(json).success).toBe(false);
      });
    }
  });
}

const ag2Envelopes = folders.find((f) => f.name === 'Envelope')?.valid.filter((f) => f.startsWith(AG2_PREFIX)) ?? [];

describe('AG2 envelope byte compatibility', () => {
  it('has fixtures for text, packet, invite, closed and a custom event type', () => {
    const types = ag2Envelopes.map(
      (file) => EnvelopeSchema.parse(readJson(join(FIXTURES_DIR, 'Envelope', file)).json).event_type,
    );
    expect(new Set(types)).toEqual(
      new Set([
        'ag2.msg.text',
        'ag2.packet',
        'ag2.channel.invite',
        'ag2.channel.invite.ack',
        'ag2.channel.closed',
        'acme.metrics.report',
      ]),
    );
  });

  it.each(ag2Envelopes)('%s carries exactly the 14 fields of AG2 Envelope', (file) => {
    const { json } = readJson(join(FIXTURES_DIR, 'Envelope', file));
    expect(Object.keys(EnvelopeSchema.parse(json)).sort()).toEqual(AG2_ENVELOPE_KEYS);
    expect(typeof json === 'object' && json !== null ? Object.keys(json) : []).toEqual(AG2_ENVELOPE_KEYS);
  });

  it.each(ag2Envelopes)('%s re-encodes to the exact bytes AG2 wrote', (file) => {
    const { text, json } = readJson(join(FIXTURES_DIR, 'Envelope', file));
    expect(encodeAg2Envelope(EnvelopeSchema.parse(json))).toBe(text.replace(/\n$/, ''));
  });
});
