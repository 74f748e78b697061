/**
 * Test-only entry point: a hub process whose clock and sweeps a test drives over NATS, so that a crash test can kill
 * a real process and still step time deterministically. The hub runs with a manual clock and no sweep timer; a
 * request to `<prefix>.test.<hub_id>.clock` with `{ "set_ms": number, "tick": boolean }` sets the clock and, if
 * `tick`, runs one sweep (a no-op on a standby), then answers `{ "role", "now_ms" }` or `{ "error" }`.
 *
 * Usage: clocked-hub.ts <nats-url> <prefix> <hub-id> <start-ms> <lease-ttl-ms>
 */
import { createManualClock, startHub } from '@ag2net/hub';
import { connect } from '@nats-io/transport-node';
import { z } from 'zod';

const ArgsSchema = z.tuple([
  z.string().min(1),
  z.string().min(1),
  z.string().min(1),
  z.coerce.number().int(),
  z.coerce.number().int().min(300),
]);
const ControlSchema = z.strictObject({ set_ms: z.number().int(), tick: z.boolean().default(false) });

const say = (line: string): boolean => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const [natsUrl, prefix, hubId, startMs, leaseTtlMs] = ArgsSchema.parse(process.argv.slice(2));
  const clock = createManualClock(startMs);
  const nc = await connect({ servers: natsUrl, name: `clocked-hub-${hubId}` });
  const hub = await startHub({
    connection: nc,
    prefix,
    hubId,
    clock,
    leaseTtlMs,
    sweepIntervalMs: 0,
    awaitActive: false,
  });
  nc.subscribe(`${prefix}.test.${hubId}.clock`, {
    callback: (err, msg) => {
      if (err !== null) return;
      void (async () => {
        try {
          const control = ControlSchema.parse(JSON.parse(msg.string()));
          clock.set(control.set_ms);
          if (control.tick) await hub.tick();
          msg.respond(JSON.stringify({ role: hub.role, now_ms: clock.now() }));
        } catch (thrown) {
          msg.respond(JSON.stringify({ error: thrown instanceof Error ? thrown.message : String(thrown) }));
        }
      })();
    },
  });
  await nc.flush();
  say(hub.role === 'active' ? `${hubId} active` : `${hubId} started as standby`);
  void hub.whenActive().then(() => say(`${hubId} serving`));
  process.on('SIGTERM', () => {
    void hub
      .close()
      .then(() => nc.close())
      .then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`clocked hub failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
