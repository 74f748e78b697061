/**
 * `npm start`: the whole local stack and a demo, secured by default. It lays out the NATS auth in `.data/auth/`
 * (`authInit`: operator, accounts, service users, server config; rerunnable, keys kept) and an API key per demo
 * identity (`.data/auth/api-keys.json`), then, without NATS_URL, starts a local nats-server in operator mode with
 * JetStream (data in .data/nats) on port 4222, or on a random port when 4222 is taken (data in .data/nats-alt).
 * Two hub-service processes (hub-1, hub-2) spread the channels over 8 partitions, each serving a share (a prefix an
 * earlier run provisioned keeps its count); they run with `--auth-dir` and the API keys and issue each identity its
 * own credentials; the demo's agent-runner and person connect as the registrant, register with their API keys, and
 * keep their issued credentials in `.data/creds/<server>/<prefix>/`. It closes the channels an earlier unfinished run left open,
 * starts an agent-runner hosting the demo agents, builds the web console (when its build is older than its sources)
 * and starts the bridge serving it on 127.0.0.1:8787 (a free port when 8787 is taken), then runs one channel of each
 * protocol as a human participant and prints the transcripts. The bridge's files are in `.data/auth/`: the people file
 * (`bridge-people.json`: the demo's person and whoever `ag2net people add` admitted), the secret and the operator key
 * (random once, kept); the demo's person is registered with the key the bridge derives for it, so whoever signs in
 * to the console as `you` is the demo's person. The stack keeps running until Ctrl-C, and says where the console, its
 * sign-in link, the URL, credentials and API keys are (`--exit` stops it after the demo). Logs of the services go to
 * .data/logs/. It can be run again in any state the last run left. A model that fails (a wrong key, an unreachable or
 * silent endpoint) does not stop it: the demo prints each failure notice with its cause and goes on, and the stack
 * keeps running; a model environment that cannot work (a base URL without a model) stops it before anything starts.
 *
 * `--insecure` runs everything without authentication, as NATS does by default: anyone who reaches the server can
 * act as anyone (the bridge still asks the person's key, kept in `.data/bridge/`). For experiments only; it says so
 * loudly.
 */
import { DEFAULT_MODEL_TIMEOUT_MS, modelConfigFromEnv, type ModelConfig } from '@ag2net/agent';
import { DEFAULT_PREFIX } from '@ag2net/protocol';
import type { NatsServer } from '@ag2net/test-support';
import { basename, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ZodError } from 'zod';
import { credsServerKey, prepareStackAuth, type StackAuth } from './stack/auth.js';
import { INSECURE_BRIDGE_DIR, prepareBridgeFiles, startStackBridge } from './stack/bridge.js';
import { buildConsole } from './stack/console.js';
import { DEMO_AGENTS, DEMO_PERSON, runDemo } from './stack/demo.js';
import { STACK_HUB_IDS, STACK_PARTITIONS, provisionedPartitions, settledHubs, untilProvisioned } from './stack/hubs.js';
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
    // Before anything starts: a model environment the runner would refuse stops here, with the reason.
    const model = modelOfEnv(process.env);
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
    const operator = { natsUrl, prefix, creds: auth?.adminCreds ?? null };
    // A prefix keeps the partition count it was first provisioned with: a stack an earlier run made keeps its own.
    const provisioned = await provisionedPartitions(operator);
    const partitions = provisioned ?? STACK_PARTITIONS;
    if (provisioned !== null && provisioned !== STACK_PARTITIONS) {
      say(keptCountNotice({ prefix, provisioned, storeDir: place === null ? null : shown(place.storeDir) }));
    }
    say(
      `· starting hub-service twice (${STACK_HUB_IDS.join(', ')}): ` +
        (partitions === 1
          ? 'one partition, one serves and one stands by'
          : `each serves a share of ${partitions} partitions`),
    );
    for (const hubId of STACK_HUB_IDS) {
      const service = await startStackService({
        root: ROOT,
        logDir,
        name: hubId,
        entry: 'hub-service/src/main.ts',
        args: [
          '--hub-id',
          hubId,
          '--partitions',
          String(partitions),
          ...(auth === null ? [] : ['--auth-dir', auth.dir, '--api-keys', auth.apiKeysFile]),
        ],
        env,
      });
      services.push(service);
      // The first hub provisions a new prefix; the second starts on the streams and consumers it made.
      if (hubId === STACK_HUB_IDS[0] && provisioned === null) {
        await untilProvisioned({
          ...operator,
          partitions,
          timeoutMs: 60_000,
          failed: () => {
            const code = service.child.exitCode;
            return code === null
              ? null
              : `hub-service ${hubId} exited with code ${code}; see ${shown(service.logFile)}`;
          },
        });
      }
    }
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
    say(`· agents answer with ${describeModel(model)}`);
    say('· starting the bridge (HTTP API and web console)');
    const bridge = await startStackBridge({ root: ROOT, logDir, env, authDir: auth?.dir ?? null, files: bridgeFiles });
    services.push(bridge.service);
    if (bridge.movedFrom !== null) say(`· port ${bridge.movedFrom} is taken; the bridge listens on ${bridge.url}`);
    say(`· web console  ${bridge.url}  (sign in: ${bridge.signInUrl})`);
    const started = Date.now();
    // An answer may take a few model calls (a tool call, then the text), each up to the model's timeout.
    const turnTimeoutMs = Math.max(120_000, 4 * model.timeoutMs + 10_000);
    const outcome = await runDemo({ natsUrl, prefix, say, turnTimeoutMs, auth: demoAuth });
    say(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s. Logs: ${shown(logDir)}/`);
    const runnerLog = shown(join(logDir, 'agent-runner.log'));
    if (outcome.failedTurns > 0) {
      say(
        `· the agents could not answer ${outcome.failedTurns} time(s): their model failed. Each notice above says why; ` +
          `so do ${runnerLog} (the "turn failed" lines) and the failed turn in the web console.`,
      );
    }
    if (outcome.stopped !== null) {
      say(`· the demo stopped early (${outcome.stopped}); see the logs in ${shown(logDir)}/.`);
    }
    if (values.exit === true) {
      await stopAll();
      // A model that fails is the environment's; a demo that stopped for another reason is the stack's.
      return outcome.stopped === null ? 0 : 1;
    }
    // A hub that joins takes its share over after two lease times: the lines say who serves what once it has.
    const hubs = await settledHubs({
      ...operator,
      waitMs: 30_000,
      waiting: () =>
        say(`· waiting for the hubs to share the partitions (a hub's share moves two lease times after it starts)`),
    }).catch(() => []);
    printNextSteps({
      say,
      natsUrl,
      prefix,
      hubs,
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

/**
 * What `npm start` says when the prefix was provisioned with another partition count than a new one gets: it keeps
 * that count (the prefix's channels live in its partitions) and says how to get the new count.
 */
function keptCountNotice(options: { prefix: string; provisioned: number; storeDir: string | null }): string {
  const { prefix, provisioned, storeDir } = options;
  const count = provisioned === 1 ? '1 partition' : `${provisioned} partitions`;
  const fresh = storeDir === null ? '' : `, or remove ${storeDir} (this deletes the stack's channels and history)`;
  return (
    `· prefix ${prefix} was provisioned with ${count} by an earlier run, and a prefix keeps its count: both hubs ` +
    `run with --partitions ${provisioned}. For ${STACK_PARTITIONS}, run on a prefix no hub has started on ` +
    `(npm start -- --prefix <new>)${fresh}.`
  );
}

/** The model the environment names, and the timeout of each call; throws when the runner would refuse them. */
function modelOfEnv(env: NodeJS.ProcessEnv): { config: ModelConfig | null; timeoutMs: number } {
  let config: ModelConfig | null;
  try {
    config = modelConfigFromEnv(env);
  } catch (err) {
    if (!(err instanceof ZodError)) throw err;
    const issues = err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`the model's environment is invalid: ${issues}`, { cause: err });
  }
  const raw = env['AG2NET_LLM_TIMEOUT_MS'] ?? '';
  const timeoutMs = raw === '' ? DEFAULT_MODEL_TIMEOUT_MS : Number(raw);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 3_600_000) {
    throw new Error(`AG2NET_LLM_TIMEOUT_MS must be a whole number of ms from 100 to 3600000; got ${raw}`);
  }
  return { config, timeoutMs };
}

/** The line's end of `· agents answer with …`: which model, where, and how long a person waits at most per call. */
function describeModel(model: { config: ModelConfig | null; timeoutMs: number }): string {
  const { config, timeoutMs } = model;
  const limit = `; a call that gets no answer within ${timeoutMs / 1000} s fails (AG2NET_LLM_TIMEOUT_MS)`;
  const scripted =
    'the scripted offline model: canned answers, no LLM; their passports say provider scripted ' +
    '(set OPENAI_API_KEY, ANTHROPIC_API_KEY or AG2NET_LLM_BASE_URL for a real one)';
  if (config === null) return scripted;
  switch (config.provider) {
    case 'scripted':
      return scripted;
    case 'openai':
      return `OpenAI's ${config.model}${limit}`;
    case 'anthropic':
      return `Anthropic's ${config.model}${limit}`;
    case 'openai-compatible':
      return `${config.model} at ${withoutCredentials(config.baseURL)}${limit}`;
    default: {
      const unknown: never = config;
      return String(unknown);
    }
  }
}

/** A URL as it may be printed: no user, password or query (where keys go). */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  return parsed.toString();
}

/** A path as messages show it: relative to the working directory when inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

void main().then((code) => process.exit(code));
