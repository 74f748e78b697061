/**
 * `npm start`: the whole local stack and a demo, secured by default. It lays out the NATS auth in `.data/auth/`
 * (`authInit`: operator, accounts, service users, server config; rerunnable, keys kept) and an API key per demo
 * identity (`.data/auth/api-keys.json`), then, without NATS_URL, starts a local nats-server in operator mode with
 * JetStream (data in .data/nats) on port 4222, or on a random port when 4222 is taken (data in .data/nats-alt).
 * hub-service runs with `--auth-dir` and the API keys and issues each identity its own credentials; the demo's
 * agent-runner and person connect as the registrant, register with their API keys, and keep their issued
 * credentials in `.data/creds/<server>/<prefix>/`. It closes the channels an earlier unfinished run left open,
 * starts an agent-runner hosting the demo agents, builds the web console (when its build is older than its sources)
 * and starts the bridge serving it on 127.0.0.1:8787 (a free port when 8787 is taken), then runs one channel of each
 * protocol as a human participant and prints the transcripts. The bridge's files are in `.data/auth/`: the people file
 * (`bridge-people.json`, the demo's person only, with the key the hub admits it with), the secret and the operator key
 * (random once, kept); the demo's person is registered with the key the bridge derives for it, so whoever signs in
 * to the console as `you` is the demo's person. The stack keeps running until Ctrl-C, and says where the console, its
 * sign-in link, the URL, credentials and API keys are (`--exit` stops it after the demo). Logs of the services go to
 * .data/logs/. It can be run again in any state the last run left.
 *
 * `--insecure` runs everything without authentication, as NATS does by default: anyone who reaches the server can
 * act as anyone (the bridge still asks the person's key, kept in `.data/bridge/`). For experiments only; it says so
 * loudly.
 */
import { DEFAULT_PREFIX } from '@ag2net/protocol';
import type { NatsServer } from '@ag2net/test-support';
import { basename, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { credsServerKey, prepareStackAuth, type StackAuth } from './stack/auth.js';
import { INSECURE_BRIDGE_DIR, prepareBridgeFiles, startStackBridge } from './stack/bridge.js';
import { buildConsole } from './stack/console.js';
import { DEMO_AGENTS, DEMO_PERSON, runDemo } from './stack/demo.js';
import { closeLeftoverChannels } from './stack/leftovers.js';
import { NATS_PORT, placeLocalNats, startLocalNats } from './stack/nats.js';
import { PYTHON_QUICK_START_IDENTITIES, README_IDENTITIES, printNextSteps } from './stack/next-steps.js';
import { startStackService, type StackService } from './stack/services.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const say = (line: string): void => void process.stdout.write(`${line}\n`);

/** The loud part of `--insecure`: what running without auth means. */
const INSECURE_WARNING = [
  '',
  '!!! --insecure: NATS runs WITHOUT AUTHENTICATION. Anyone who can reach it can post as any agent, read every',
  '!!! inbox, rewrite the registry and take over the hub. For experiments on this machine only.',
  '',
].join('\n');

/**
 * Connection and credential settings of the environment (e.g. exported for README's example) that must not reach the
 * stack's own services: they get theirs from the flags `npm start` passes.
 */
const CONNECTION_ENV = [
  'NATS_CREDS',
  'NATS_USER',
  'NATS_PASSWORD',
  'NATS_TOKEN',
  'AG2NET_CREDS',
  'AG2NET_CREDS_DIR',
  'AG2NET_API_KEY',
  'AG2NET_API_KEYS',
  'AG2NET_AUTH_DIR',
  'AG2NET_OPEN_REGISTRATION',
  'AG2NET_BRIDGE_SECRET',
  'AG2NET_OPERATOR_KEY',
  'AG2NET_ANONYMOUS_READ',
  'AG2NET_BRIDGE_HOST',
  'AG2NET_BRIDGE_PORT',
  'AG2NET_BRIDGE_OPS_PORT',
] as const;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      exit: { type: 'boolean' },
      prefix: { type: 'string' },
      insecure: { type: 'boolean' },
      'data-dir': { type: 'string' },
    },
  });
  const prefix = values.prefix ?? (process.env['AG2NET_PREFIX'] || DEFAULT_PREFIX);
  const insecure = values.insecure === true;
  const dataDir = resolve(values['data-dir'] ?? join(ROOT, '.data'));
  const services: StackService[] = [];
  let nats: NatsServer | null = null;
  let stopping: Promise<void> | null = null;
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      say('\nstopping …');
      for (const s of [...services].reverse()) await s.stop();
      await nats?.stop();
      say('stopped.');
    })());
  process.on('SIGINT', () => void stopAll().then(() => process.exit(0)));
  process.on('SIGTERM', () => void stopAll().then(() => process.exit(0)));

  try {
    if (insecure) say(INSECURE_WARNING);
    // First, while nothing runs yet: a console that does not build stops here.
    await buildConsole({ root: ROOT, say });
    // With NATS_URL, a server someone else runs; otherwise one of our own, placed now (its port goes into the auth).
    const externalUrl = process.env['NATS_URL'] ?? '';
    const place = externalUrl === '' ? await placeLocalNats(dataDir) : null;
    let auth: StackAuth | null = null;
    if (!insecure) {
      say(`· NATS auth in ${shown(join(dataDir, 'auth'))}`);
      auth = await prepareStackAuth({
        dataDir,
        prefix,
        server: place === null ? credsServerKey(externalUrl) : basename(place.storeDir),
        identities: [...DEMO_AGENTS, DEMO_PERSON, ...README_IDENTITIES, ...PYTHON_QUICK_START_IDENTITIES],
        hosts: { runner: DEMO_AGENTS, client: [...README_IDENTITIES, ...PYTHON_QUICK_START_IDENTITIES] },
        init: place === null ? null : { port: place.port ?? NATS_PORT, storeDir: place.storeDir },
      });
    }
    let natsUrl = externalUrl;
    if (place === null) {
      say(`· using NATS at ${natsUrl}`);
    } else {
      nats = await startLocalNats({ place, authDir: auth?.dir ?? null, say });
      natsUrl = nats.url;
    }

    const unset = Object.fromEntries(CONNECTION_ENV.map((k) => [k, undefined]));
    const env = { ...unset, NATS_URL: natsUrl, AG2NET_PREFIX: prefix };
    const logDir = join(dataDir, 'logs');
    say('· starting hub-service');
    services.push(
      await startStackService({
        root: ROOT,
        logDir,
        name: 'hub-service',
        entry: 'hub-service/src/main.ts',
        args: auth === null ? [] : ['--auth-dir', auth.dir, '--api-keys', auth.apiKeysFile],
        env,
      }),
    );
    const bridgeFiles = await prepareBridgeFiles({
      dir: auth?.dir ?? join(dataDir, INSECURE_BRIDGE_DIR),
      personKey: auth === null ? null : (auth.apiKeys[DEMO_PERSON] ?? null),
    });
    const demoAuth =
      auth === null
        ? null
        : {
            creds: auth.registrantCreds,
            apiKeys: auth.apiKeys,
            credsDir: auth.credsDir,
            personSeed: bridgeFiles.personSeed,
          };
    const leftovers = await closeLeftoverChannels({ natsUrl, prefix, retryForMs: 30_000, auth: demoAuth });
    if (leftovers > 0) say(`· closed ${leftovers} channel(s) an earlier run left open`);
    say('· starting agent-runner with the demo agents');
    services.push(
      await startStackService({
        root: ROOT,
        logDir,
        name: 'agent-runner',
        entry: 'agent-runner/src/main.ts',
        args: [
          'agent-runner/demo/agents.yaml',
          ...(auth === null
            ? []
            : ['--creds', auth.registrantCreds, '--creds-dir', auth.credsDir, '--api-keys', auth.runnerApiKeysFile]),
        ],
        env,
      }),
    );
    const llm = process.env['OPENAI_API_KEY']
      ? 'OpenAI'
      : process.env['ANTHROPIC_API_KEY']
        ? 'Anthropic'
        : process.env['AG2NET_LLM_BASE_URL']
          ? process.env['AG2NET_LLM_BASE_URL']
          : 'the scripted offline model (set OPENAI_API_KEY, ANTHROPIC_API_KEY or AG2NET_LLM_BASE_URL for a real one)';
    say(`· agents answer with ${llm}`);
    say('· starting the bridge (HTTP API and web console)');
    const bridge = await startStackBridge({ root: ROOT, logDir, env, authDir: auth?.dir ?? null, files: bridgeFiles });
    services.push(bridge.service);
    if (bridge.movedFrom !== null) say(`· port ${bridge.movedFrom} is taken; the bridge listens on ${bridge.url}`);
    say(`· web console  ${bridge.url}  (sign in: ${bridge.signInUrl})`);
    const started = Date.now();
    await runDemo({ natsUrl, prefix, say, turnTimeoutMs: 120_000, auth: demoAuth });
    say(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s. Logs: ${shown(logDir)}/`);
    if (values.exit === true) {
      await stopAll();
      return 0;
    }
    printNextSteps({
      say,
      natsUrl,
      prefix,
      auth: auth === null ? null : { ...auth, shown },
      console: { url: bridge.url, signInUrl: bridge.signInUrl, operatorKeyFile: shown(bridgeFiles.operatorKeyFile) },
    });
    if (insecure) say(INSECURE_WARNING);
    await new Promise(() => undefined);
    return 0;
  } catch (err) {
    process.stderr.write(`\nnpm start failed: ${err instanceof Error ? err.message : String(err)}\n`);
    for (const s of services) process.stderr.write(`  see ${s.logFile}\n`);
    await stopAll();
    return 1;
  }
}

/** A path as messages show it: relative to the working directory when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

void main().then((code) => process.exit(code));
