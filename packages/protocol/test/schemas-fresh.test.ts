import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HUB_OPS, HUB_OP_NAMES, WIRE_SCHEMAS } from '@ag2net/protocol';
import { renderSchemaFiles } from '../scripts/render-schemas.js';
import { SCHEMAS_DIR, diffSchemaDir } from '../scripts/schema-dir.js';
import { SCHEMA_FILE_SUFFIX } from '../scripts/schema-document.js';

const RUN_GENERATOR =
  'docs/schemas is out of date with WIRE_SCHEMAS or HUB_OPS; run `npm run schemas` and commit the result';

function parsed(path: string): unknown {
  const text = renderSchemaFiles().get(path);
  expect(text, `${path} is rendered`).toBeDefined();
  return JSON.parse(text ?? '');
}

describe('docs/schemas', () => {
  const rendered = renderSchemaFiles();

  it('holds every file the generator renders, byte for byte, in rpc/ too', async () => {
    const { missing, differs } = await diffSchemaDir(SCHEMAS_DIR, rendered);
    expect({ missing, differs }, RUN_GENERATOR).toEqual({ missing: [], differs: [] });
  });

  it('holds no schema file, at the root or in rpc/, that the generator does not render', async () => {
    const { extra } = await diffSchemaDir(SCHEMAS_DIR, rendered);
    expect(extra, RUN_GENERATOR).toEqual([]);
  });

  // Reads the disk without the renderer, so an op the renderer forgot still fails here.
  it('holds a request and a response schema for every hub operation', async () => {
    const absent: string[] = [];
    for (const op of Object.keys(HUB_OPS)) {
      for (const side of ['request', 'response']) {
        const path = `rpc/${op}.${side}${SCHEMA_FILE_SUFFIX}`;
        const text = await readFile(join(SCHEMAS_DIR, path), 'utf8').catch(() => undefined);
        if (text === undefined) absent.push(path);
      }
    }
    expect(absent, RUN_GENERATOR).toEqual([]);
  });
});

describe('diffSchemaDir', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ag2net-schemas-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function writeRendered(rendered: ReadonlyMap<string, string>): Promise<void> {
    for (const [path, content] of rendered) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content, 'utf8');
    }
  }

  it('reports nothing for a folder holding exactly the rendered files', async () => {
    const rendered = renderSchemaFiles();
    await writeRendered(rendered);
    expect(await diffSchemaDir(dir, rendered)).toEqual({ missing: [], differs: [], extra: [] });
  });

  it('reports a stale, a missing and a no-longer-rendered rpc schema', async () => {
    const rendered = renderSchemaFiles();
    await writeRendered(rendered);
    await writeFile(join(dir, 'rpc/health.response.schema.json'), '{}\n', 'utf8');
    await rm(join(dir, 'rpc/post.request.schema.json'));
    await writeFile(join(dir, 'rpc/retired.request.schema.json'), '{}\n', 'utf8');
    await writeFile(join(dir, 'Retired.schema.json'), '{}\n', 'utf8');
    expect(await diffSchemaDir(dir, rendered)).toEqual({
      missing: ['rpc/post.request.schema.json'],
      differs: ['rpc/health.response.schema.json'],
      extra: ['Retired.schema.json', 'rpc/retired.request.schema.json'],
    });
  });

  it('reports every rpc file missing when rpc/ does not exist', async () => {
    const rendered = renderSchemaFiles();
    const rootOnly = new Map([...rendered].filter(([path]) => !path.startsWith('rpc/')));
    await writeRendered(rootOnly);
    const { missing } = await diffSchemaDir(dir, rendered);
    expect(missing).toEqual([...rendered.keys()].filter((path) => path.startsWith('rpc/')));
  });
});

describe('renderSchemaFiles', () => {
  it('renders one schema per WIRE_SCHEMAS entry plus the README at the root', () => {
    const expected = [...Object.keys(WIRE_SCHEMAS).map((name) => `${name}${SCHEMA_FILE_SUFFIX}`), 'README.md'];
    expect([...renderSchemaFiles().keys()].filter((path) => !path.includes('/'))).toEqual(expected);
  });

  it('renders a request and a response per hub operation, then RpcReply and a README, under rpc/', () => {
    const expected = [
      ...Object.keys(HUB_OPS).flatMap((op) => [
        `rpc/${op}.request${SCHEMA_FILE_SUFFIX}`,
        `rpc/${op}.response${SCHEMA_FILE_SUFFIX}`,
      ]),
      'rpc/RpcReply.schema.json',
      'rpc/README.md',
    ];
    expect([...renderSchemaFiles().keys()].filter((path) => path.startsWith('rpc/'))).toEqual(expected);
  });

  it('renders the same bytes on every call', () => {
    expect([...renderSchemaFiles()]).toEqual([...renderSchemaFiles()]);
  });

  it('stamps $id and title and pretty-prints with two spaces and a trailing newline', () => {
    const text = renderSchemaFiles().get('Envelope.schema.json');
    expect(text).toBeDefined();
    const doc: unknown = JSON.parse(text ?? '');
    expect(doc).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://ag2net.dev/schemas/Envelope.schema.json',
      title: 'Envelope',
      type: 'object',
      additionalProperties: false,
    });
    expect(text).toBe(`${JSON.stringify(doc, null, 2)}\n`);
  });

  it('describes the input side: only fields without a default are required', () => {
    expect(parsed('Envelope.schema.json')).toMatchObject({ required: ['channel_id', 'sender_id', 'event_type'] });
    expect(parsed('Rule.schema.json')).not.toHaveProperty('required');
  });

  it('lists every schema in the README with a link, and links the rpc README', () => {
    const readme = renderSchemaFiles().get('README.md') ?? '';
    for (const name of Object.keys(WIRE_SCHEMAS)) {
      expect(readme).toContain(`| [${name}](./${name}${SCHEMA_FILE_SUFFIX}) | `);
    }
    expect(readme).toContain('[rpc/](./rpc/README.md)');
  });
});

describe('renderSchemaFiles: rpc', () => {
  it('names the subject without a caller for an operation that has none', () => {
    expect(parsed('rpc/register.request.schema.json')).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://ag2net.dev/schemas/rpc/register.request.schema.json',
      title: 'RegisterRequest',
      description:
        'Request of the hub RPC `register`, sent on `<prefix>.hub.v1.register`. Fields with a default may be omitted.',
      type: 'object',
      additionalProperties: false,
    });
  });

  it('names the subject with the caller id for an operation that has one', () => {
    expect(parsed('rpc/closeChannel.response.schema.json')).toMatchObject({
      $id: 'https://ag2net.dev/schemas/rpc/closeChannel.response.schema.json',
      title: 'CloseChannelResponse',
      description:
        'Response of the hub RPC `closeChannel`: the `result` of an `ok` RpcReply to ' +
        '`<prefix>.hub.v1.closeChannel.<caller_id>`.',
    });
  });

  it('renders requests on the input side and responses on the output side', () => {
    // The same ResumeSchema: its defaulted fields are optional to a sender and always present from the hub.
    const request = parsed('rpc/setResume.request.schema.json');
    const response = parsed('rpc/setResume.response.schema.json');
    expect(request).toMatchObject({ required: ['resume'] });
    expect(request).not.toHaveProperty('properties.resume.required');
    expect(response).toMatchObject({
      required: ['resume'],
      properties: {
        resume: {
          required: ['claimed_capabilities', 'domains', 'summary', 'examples', 'observed', 'version', 'last_updated'],
        },
      },
    });
    expect(parsed('rpc/listChannels.request.schema.json')).not.toHaveProperty('required');
    expect(parsed('rpc/closeChannel.request.schema.json')).toMatchObject({ required: ['channel_id'] });
  });

  it('renders the RpcReply result as any JSON value that points at the response schemas', () => {
    const reply = parsed('rpc/RpcReply.schema.json');
    expect(reply).toMatchObject({
      $id: 'https://ag2net.dev/schemas/rpc/RpcReply.schema.json',
      title: 'RpcReply',
      oneOf: [
        { properties: { ok: { const: true } }, required: ['ok', 'result'] },
        { properties: { ok: { const: false } }, required: ['ok', 'error'] },
      ],
    });
    // Equality, not a match: the description is all there is, so any result is accepted, as RpcReplySchema does.
    expect(reply).toHaveProperty(['oneOf', 0, 'properties', 'result'], {
      description: "The operation's response: see `<op>.response.schema.json` for each operation.",
    });
  });

  it('lists every operation in the rpc README with its subject, caller flag and both schemas', () => {
    const readme = renderSchemaFiles().get('rpc/README.md') ?? '';
    for (const op of HUB_OP_NAMES) {
      const subject = HUB_OPS[op].caller ? `<prefix>.hub.v1.${op}.<caller_id>` : `<prefix>.hub.v1.${op}`;
      expect(readme).toContain(
        `| \`${op}\` | \`${subject}\` | ${HUB_OPS[op].caller ? 'yes' : 'no'} | ` +
          `[${op}.request](./${op}.request.schema.json) | [${op}.response](./${op}.response.schema.json) |`,
      );
    }
    expect(readme).toContain('[RpcReply](./RpcReply.schema.json)');
  });
});
