/**
 * A project outside the ag2net repository, using only what the published packages export: given a NATS server
 * with JetStream (first argument or NATS_URL), it starts a hub, registers an agent answering with the scripted
 * model, attaches a human, asks one question on a consulting channel and prints the answer as `answer: <text>`, then
 * runs `ag2net health --json` through the command's library entry and prints the hub's role as `ag2net health: <role>`.
 * Exits 0 when the agent answered and the command ran, 1 otherwise. Everything it starts it also stops; the NATS
 * server stays.
 */
import { Agent, createModel, registerAgent } from '@ag2net/agent';
import { HubClient } from '@ag2net/client';
import { startHub } from '@ag2net/hub';
import { EV_TEXT, EV_TURN_FAILED, TextDataSchema } from '@ag2net/protocol';
import { runCli, type CliIo } from 'ag2net';

/** How long the human waits for the agent's answer, in ms. */
const ANSWER_TIMEOUT_MS = 30_000;

async function main(): Promise<number> {
  const servers = process.argv[2] ?? process.env['NATS_URL'];
  if (servers === undefined || servers === '') {
    process.stderr.write('usage: node dist/main.js <nats-url>   (or set NATS_URL)\n');
    return 2;
  }
  const prefix = process.env['AG2NET_PREFIX'] || 'ag2';

  await using hub = await startHub({ servers, prefix });
  await using client = await HubClient.connect({ servers, prefix });

  const model = createModel({ provider: 'scripted', script: ['A log is an append-only sequence of records.'] });
  await registerAgent(client, new Agent({ name: 'scholar', instructions: 'Answer in one sentence.', model }), {
    resume: { summary: 'Answers questions about logs.' },
  });

  const me = await client.attachHuman('reader');
  const channel = await me.open({ type: 'consulting', target: 'scholar' });
  await channel.send('What is a log?');
  const reply = await me.nextEnvelope({
    predicate: (e) => e.sender_id !== me.agentId && (e.event_type === EV_TEXT || e.event_type === EV_TURN_FAILED),
    timeout: ANSWER_TIMEOUT_MS,
  });
  process.stdout.write(`hub ${hub.hubId} (${hub.role})\n`);
  const text = reply?.event_type === EV_TEXT ? TextDataSchema.safeParse(reply.event_data) : undefined;
  if (text === undefined || !text.success) {
    process.stderr.write(`no answer: ${reply === null ? 'timed out' : JSON.stringify(reply.event_data)}\n`);
    return 1;
  }
  process.stdout.write(`answer: ${text.data.text}\n`);

  const role = await cliHealthRole(servers, prefix);
  if (role === null) return 1;
  process.stdout.write(`ag2net health: ${role}\n`);
  return 0;
}

/** The hub's role as `ag2net health --json` reports it, or `null` (with the command's output) when it failed. */
async function cliHealthRole(servers: string, prefix: string): Promise<string | null> {
  let out = '';
  let err = '';
  const io: CliIo = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    lines: async function* () {},
    env: {},
    isTty: false,
    signal: new AbortController().signal,
  };
  const code = await runCli(['health', '--server', servers, '--prefix', prefix, '--json'], io);
  const report: unknown = code === 0 ? JSON.parse(out) : null;
  if (typeof report === 'object' && report !== null && 'role' in report && typeof report.role === 'string') {
    return report.role;
  }
  process.stderr.write(`ag2net health exited ${code}: ${out}${err}\n`);
  return null;
}

process.exitCode = await main();
