import { ConversationAdapter, createDefaultAdapterRegistry, type ConversationState } from '@ag2net/adapters';
import type { Logger, RequestOutcome } from '@ag2net/hub';
import { ChannelManifestSchema } from '@ag2net/protocol';
import { natsPerFile, uniqueName } from '@ag2net/test-support';
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { openChannel, openNet, rawFailure, register, type TestNet } from './support.js';

const nats = natsPerFile();

/** A logger that keeps the level and message of every line. */
function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (_: object, msg?: string) => void lines.push(`${level} ${msg ?? ''}`);
  const logger = {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

/** What nats.js rejects a real request with: one to a subject whose only subscriber never answers, one to nobody. */
async function realFailures(nc: NatsConnection): Promise<{ timeout: Error; noResponders: Error }> {
  const silent = uniqueName('silent');
  const sub = nc.subscribe(silent, { callback: () => undefined });
  await nc.flush();
  const failure = async (request: Promise<unknown>): Promise<Error> => {
    try {
      await request;
    } catch (err) {
      if (err instanceof Error) return err;
    }
    throw new Error('expected the request to fail with an error');
  };
  const timeout = await failure(nc.request(silent, '', { timeout: 200 }));
  const noResponders = await failure(nc.request(uniqueName('nobody'), '', { timeout: 5_000 }));
  sub.unsubscribe();
  return { timeout, noResponders };
}

/**
 * A conversation whose adapter state cannot be read while `failWith` holds an error: the handler of `adapterState`
 * throws it, as a handler does when a NATS request of its own failed.
 */
function stallingConversation() {
  const manifest = ChannelManifestSchema.parse({ type: 'stalling', participants: { min: 2, max: 2 } });
  const adapter = new (class extends ConversationAdapter {
    override readonly manifest = manifest;
    failWith: Error | null = null;
    override stateFor(state: ConversationState, participantId: string): ConversationState {
      if (this.failWith !== null) throw this.failWith;
      return super.stateFor(state, participantId);
    }
  })();
  return { adapter, adapters: createDefaultAdapterRegistry().register(adapter) };
}

async function stalledChannel(net: TestNet) {
  const alice = await register(net, 'alice');
  const bob = await register(net, 'bob');
  const cid = (await openChannel(net, alice, 'stalling', [bob])).channel_id;
  const askState = () => rawFailure(net, net.names.rpc('adapterState', bob.id), JSON.stringify({ channel_id: cid }));
  return { alice, bob, cid, askState };
}

describe('a handler whose NATS request fails for a passing reason', () => {
  it('answers a timed-out request with a retryable unavailable naming the op, logged as one warning', async () => {
    const logger = recordingLogger();
    const stalling = stallingConversation();
    const outcomes: string[] = [];
    const observer = { requestFinished: ({ op, code }: RequestOutcome) => void outcomes.push(`${op}: ${code}`) };
    await using net = await openNet(nats.url, { adapters: stalling.adapters, logger, observer });
    const { timeout, noResponders } = await realFailures(net.nc);
    const { askState } = await stalledChannel(net);
    logger.lines.length = 0;
    outcomes.length = 0;

    stalling.adapter.failWith = timeout;
    expect(await askState()).toEqual({
      code: 'unavailable',
      message: 'adapterState could not be served now: a NATS request timed out; retry',
    });
    stalling.adapter.failWith = noResponders;
    expect(await askState()).toEqual({
      code: 'unavailable',
      message: 'adapterState could not be served now: NATS had no responder; retry',
    });
    // Counted as unavailable, not as a failure of the hub, and never logged as one.
    expect(outcomes).toEqual(['adapterState: unavailable', 'adapterState: unavailable']);
    expect(logger.lines.filter((l) => !l.startsWith('debug'))).toEqual([
      'warn rpc answered unavailable',
      'warn rpc answered unavailable',
    ]);
  });
});
