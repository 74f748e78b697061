/**
 * compose.yaml, parsed (there is no container runtime where the tests run): the bridge service runs like the others,
 * secured with the files `npm start` lays out, its console published on 127.0.0.1 only, healthy by its /readyz; the
 * two hubs share 8 partitions.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { API_KEYS_FILE, RUNNER_API_KEYS_FILE } from '../scripts/stack/auth.js';
import { BRIDGE_PEOPLE_FILE, BRIDGE_SECRET_FILE, OPERATOR_KEY_FILE } from '../scripts/stack/bridge.js';

const ServiceSchema = z.looseObject({
  image: z.string().optional(),
  command: z.array(z.string()),
  working_dir: z.string().optional(),
  volumes: z.array(z.string()).optional(),
  ports: z.array(z.string()).optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
  healthcheck: z.looseObject({ test: z.array(z.string()) }).optional(),
});
const ComposeSchema = z.looseObject({ services: z.record(z.string(), ServiceSchema) });

async function compose(): Promise<z.infer<typeof ComposeSchema>> {
  // `<<: *node` merges the shared service settings, as docker compose does.
  return ComposeSchema.parse(parse(await readFile('compose.yaml', 'utf8'), { merge: true }));
}

/** `node --conditions=@ag2net/source --import tsx <entry> …`: the command `npm start` runs each service with. */
const NODE = ['node', '--conditions=@ag2net/source', '--import', 'tsx'];

describe('compose.yaml', () => {
  it('runs the bridge from the sources, secured with the files npm start lays out, on 127.0.0.1:8787', async () => {
    const { services } = await compose();
    expect(Object.keys(services).sort()).toEqual(['agent-runner', 'bridge', 'hub-a', 'hub-b', 'nats']);
    const bridge = services['bridge'];
    const hub = services['hub-a'];
    expect(bridge?.command).toEqual([
      ...NODE,
      'bridge/src/main.ts',
      '--host',
      '0.0.0.0',
      '--port',
      '8787',
      '--ops-port',
      '9464',
      '--auth-dir',
      '/app/.data/auth',
      '--api-keys',
      `/app/.data/auth/${BRIDGE_PEOPLE_FILE}`,
      '--secret',
      `/app/.data/auth/${BRIDGE_SECRET_FILE}`,
      '--operator-key',
      `/app/.data/auth/${OPERATOR_KEY_FILE}`,
    ]);
    expect(bridge?.ports).toEqual(['127.0.0.1:8787:8787']);
    // The node image and the read-only mount of the others; healthy once its /readyz (on --ops-port) answers 200.
    expect([bridge?.image, bridge?.working_dir, bridge?.volumes]).toEqual(['node:20', '/app', ['.:/app:ro']]);
    expect(bridge?.healthcheck?.test.join(' ')).toContain("fetch('http://127.0.0.1:9464/readyz')");
    expect(bridge?.depends_on).toEqual({
      nats: { condition: 'service_healthy' },
      'hub-a': { condition: 'service_healthy' },
      'hub-b': { condition: 'service_healthy' },
    });
    // The hubs admit people with the keys of the same auth directory the bridge signs them in with.
    expect(hub?.command).toEqual(expect.arrayContaining(['--auth-dir', '/app/.data/auth']));
    expect(hub?.command).toContain(`/app/.data/auth/${API_KEYS_FILE}`);
  });

  it('runs hub-a and hub-b with 8 partitions each, hub-b once hub-a has provisioned the prefix', async () => {
    const { services } = await compose();
    for (const name of ['hub-a', 'hub-b']) {
      const command = services[name]?.command ?? [];
      expect(command.slice(NODE.length), name).toEqual([
        'hub-service/src/main.ts',
        '--hub-id',
        name,
        '--partitions',
        '${AG2NET_PARTITIONS:-8}',
        '--auth-dir',
        '/app/.data/auth',
        '--api-keys',
        `/app/.data/auth/${API_KEYS_FILE}`,
      ]);
    }
    expect(services['hub-a']?.depends_on).toEqual({ nats: { condition: 'service_healthy' } });
    expect(services['hub-b']?.depends_on).toEqual({
      nats: { condition: 'service_healthy' },
      'hub-a': { condition: 'service_healthy' },
    });
    const text = await readFile('compose.yaml', 'utf8');
    expect(text).toContain(
      'two hub-service instances that spread the channels over\n# 8 partitions, each serving a share',
    );
    expect(text).not.toMatch(/one active, one hot standby|back, as the standby/);
  });

  it('gives the runner the keys of the agents it hosts only, never the hubs’ whole file', async () => {
    const { services } = await compose();
    const runner = services['agent-runner']?.command ?? [];
    expect(runner[runner.indexOf('--api-keys') + 1]).toBe(`/app/.data/auth/${RUNNER_API_KEYS_FILE}`);
    expect(runner).not.toContain(`/app/.data/auth/${API_KEYS_FILE}`);
  });

  it("names entries that exist, and tells in its header how to open the console and where the console's build is", async () => {
    const { services } = await compose();
    for (const [name, service] of Object.entries(services)) {
      if (name === 'nats') continue;
      expect(service.command.slice(0, NODE.length), name).toEqual(NODE);
      expect(existsSync(service.command[NODE.length] ?? ''), name).toBe(true);
    }
    const text = await readFile('compose.yaml', 'utf8');
    expect(text).toContain('# The web console: open http://127.0.0.1:8787/ and sign in as `you`');
    expect(text).toContain('npm run build:console');
  });
});
