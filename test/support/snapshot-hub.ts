/**
 * Test-only entry point: a hub process (what hub-service runs, with a real clock) that also answers a request to
 * `<prefix>.test.<hub_id>.snapshot` with `{ "role", "epoch", "snapshot" }` — its live in-memory state — so that a
 * fault test can compare the state of the very process it paused with the fold of the log.
 *
 * Usage: snapshot-hub.ts <nats-urls> <prefix> <hub-id> <lease-ttl-ms> [<partitions>]
 *
 * With `<partitions>` the hub spreads the prefix's channels over that many partitions, its snapshot covers the
 * partitions it serves, and the answer also says which those are: `"held": [{ "partition", "epoch" }, …]`.
 */
import { startHub } from '@ag2net/hub';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { z } from 'zod';

const ArgsSchema = z.tuple([z.string().min(1), z.string().min(1), z.string().min(1), z.coerce.number().int().min(300)]);
const PartitionsArgSchema = z.coerce.number().int().min(1).optional();

async function main(): Promise<void> {
  const [natsUrls, prefix, hubId, leaseTtlMs] = ArgsSchema.parse(process.argv.slice(2, 6));
  const partitions = PartitionsArgSchema.parse(process.argv[6]);
  const nc = await connect({
    servers: natsUrls.split(','),
    name: `snapshot-hub-${hubId}`,
    maxReconnectAttempts: -1,
    noAsyncTraces: true,
  });
  const hub = await startHub({
    connection: nc,
    prefix,
    hubId,
    leaseTtlMs,
    ...(partitions === undefined ? {} : { partitions }),
    logger: pino({ name: 'hub', level: 'info' }),
    awaitActive: false,
  });
  nc.subscribe(`${prefix}.test.${hubId}.snapshot`, {
    callback: (err, msg) => {
      if (err !== null) return;
      try {
        const state = { role: hub.role, epoch: hub.epoch, snapshot: hub.snapshot() };
        // Taken in the same turn as the snapshot, so that the two agree.
        msg.respond(JSON.stringify(partitions === undefined ? state : { ...state, held: hub.health().held }));
      } catch (thrown) {
        msg.respond(JSON.stringify({ error: thrown instanceof Error ? thrown.message : String(thrown) }));
      }
    },
  });
  await nc.flush();
  process.on('SIGTERM', () => {
    void hub
      .close()
      .then(() => nc.close())
      .then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`snapshot hub failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
