import { CONVERSATION_TYPE } from '@ag2net/adapters';
import { WalHeader } from '@ag2net/protocol/internal';
import { hubNames, newId } from '@ag2net/protocol';
import { headers } from '@nats-io/transport-node';
import { performance } from 'node:perf_hooks';
import { closeMailboxes, openChannel, openMailboxes, registerAgents } from '../load/network.js';
import { LeanPoster, POST_TIMEOUT_MS, storedPayload, textTemplate } from '../load/poster.js';
import { RelayHeader } from '../raw/relay.js';
import { createRawWal, rawNames } from '../raw/streams.js';
import type { LatencyResult } from '../results.js';
import { ratio, round, summarize } from '../stats.js';
import type { ScenarioContext } from './context.js';
import { openRawMailboxes } from './raw-mailboxes.js';

/**
 * Latency, one message at a time. Hub: two agents ping-pong in a conversation; each post gives a post→ack sample
 * (the RPC reply) and a post→delivery sample (the other agent's inbox consumer yields it). The baseline for
 * post→ack is a raw request/reply round trip (to an echo responder in the host process) plus a raw JetStream publish
 * round trip (msg id + expected subject sequence). The baseline for post→delivery is the raw relay: the same hops
 * (request → append → reply; WAL consumer → inbox publish → inbox consumer) with no hub logic. The four kinds of
 * sample are taken in turn, one of each per round, so that noise from the shared machine falls on all of them alike.
 */
export async function latency(ctx: ScenarioContext): Promise<LatencyResult> {
  const s = ctx.sizes.latency;
  const prefix = ctx.prefix('lat');
  const names = hubNames(prefix);
  const raw = rawNames(prefix);
  const pub = rawNames(ctx.prefix('pub'));
  const echoSubject = `${prefix}.echo`;
  const host = await ctx.host('hub');
  await host.call('startHub', { servers: ctx.natsUrl, prefix });
  await host.call('startEcho', { servers: ctx.natsUrl, subject: echoSubject });
  await host.call('startRelay', { servers: ctx.natsUrl, prefix });
  await createRawWal(ctx.jsm, pub);

  const rpc = ctx.rpc(prefix);
  const [a, b] = await registerAgents(rpc, 'lat', 2);
  if (a === undefined || b === undefined) throw new Error('two agents expected');
  const mailboxes = await openMailboxes(rpc, ctx.js, names, [a, b], { trackArrivals: true });
  const channel = await openChannel(rpc, { type: CONVERSATION_TYPE, creator: a, invitees: [b] });
  const rawBoxes = await openRawMailboxes(ctx, raw, ['a', 'b']);

  const poster = new LeanPoster(ctx.nc, names);
  const end = (agent: string, rawName: string) => {
    const mailbox = mailboxes.get(agent);
    const rawMailbox = rawBoxes.get(rawName);
    if (mailbox === undefined || rawMailbox === undefined) throw new Error(`no mailbox for ${agent}`);
    return { agent, rawName, mailbox, rawMailbox, template: textTemplate(channel, agent) };
  };
  const ends = [end(a, 'a'), end(b, 'b')] as const;
  const payload = storedPayload(ends[0].template);
  const requestBody = ends[0].template.withId().body;
  let pubLast = 0;

  const samples = { rr: [] as number[], js: [] as number[], ack: [] as number[], delivery: [] as number[] };
  const rawSamples = { ack: [] as number[], delivery: [] as number[] };
  ctx.log(`${s.warmup} + ${s.samples} rounds`);
  for (let r = 0; r < s.warmup + s.samples; r += 1) {
    const keep = r >= s.warmup;
    const [from, to] = r % 2 === 0 ? ends : [ends[1], ends[0]];

    let t0 = performance.now();
    await ctx.nc.request(echoSubject, requestBody, { timeout: POST_TIMEOUT_MS });
    if (keep) samples.rr.push(performance.now() - t0);

    const h = headers();
    h.set(WalHeader.Epoch, '1');
    h.set(WalHeader.Sequence, String(r + 1));
    t0 = performance.now();
    const ack = await ctx.js.publish(pub.wal('ping'), payload, {
      msgID: newId(),
      expect: { lastSubjectSequence: pubLast },
      headers: h,
    });
    if (keep) samples.js.push(performance.now() - t0);
    pubLast = ack.seq;

    const { id, body } = from.template.withId();
    t0 = performance.now();
    await poster.post(from.agent, body);
    const acked = performance.now();
    const delivered = await to.mailbox.arrival(id);
    if (keep) {
      samples.ack.push(acked - t0);
      samples.delivery.push(delivered - t0);
    }

    const rawMessage = from.template.withId();
    const rh = headers();
    rh.set(RelayHeader.Id, rawMessage.id);
    rh.set(RelayHeader.To, to.rawName);
    t0 = performance.now();
    await ctx.nc.request(raw.request('ping'), rawMessage.body, { timeout: POST_TIMEOUT_MS, headers: rh });
    const rawAcked = performance.now();
    const rawDelivered = await to.rawMailbox.arrival(rawMessage.id);
    if (keep) {
      rawSamples.ack.push(rawAcked - t0);
      rawSamples.delivery.push(rawDelivered - t0);
    }
  }
  await closeMailboxes([...mailboxes.values(), ...rawBoxes.values()]);

  const rr = summarize(samples.rr);
  const js = summarize(samples.js);
  const hubAck = summarize(samples.ack);
  const hubDelivery = summarize(samples.delivery);
  const rawAck = summarize(rawSamples.ack);
  const rawDelivery = summarize(rawSamples.delivery);
  const sumP50 = round(rr.p50_ms + js.p50_ms);
  const sumP99 = round(rr.p99_ms + js.p99_ms);
  return {
    samples: s.samples,
    request_reply: rr,
    js_publish: js,
    raw_sum_p50_ms: sumP50,
    raw_sum_p99_ms: sumP99,
    hub_ack: hubAck,
    hub_delivery: hubDelivery,
    raw_pipeline_ack: rawAck,
    raw_pipeline_delivery: rawDelivery,
    ack_p50_ratio: ratio(hubAck.p50_ms, sumP50),
    ack_p99_ratio: ratio(hubAck.p99_ms, sumP99),
    delivery_p50_ratio: ratio(hubDelivery.p50_ms, rawDelivery.p50_ms),
    delivery_p99_ratio: ratio(hubDelivery.p99_ms, rawDelivery.p99_ms),
  };
}
