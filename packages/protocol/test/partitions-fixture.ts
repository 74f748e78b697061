import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/**
 * conformance/fixtures/partitions.json: how every client finds a channel's partition (FNV-1a of its id), how each
 * operation is routed, and the subjects of a partitioned deployment. The protocol's and the TypeScript client's tests
 * read it through this schema; the Python client reads the same file.
 */
export const PartitionsFixtureSchema = z.object({
  /** Channel ids, their FNV-1a 32 hash and their partition by partition count (the keys are counts). */
  channels: z.array(
    z.object({ channel_id: z.string(), fnv1a32: z.number(), partition: z.record(z.string(), z.number()) }),
  ),
  /** The route of every hub operation, by name. */
  routes: z.record(z.string(), z.enum(['channel', 'scattered', 'home'])),
  subjects: z.object({
    prefix: z.string(),
    /** The partition count of `examples`. */
    partitions: z.number(),
    /** One request each: what it is about (a channel, a partition or neither) and the subject it goes to. */
    examples: z.array(
      z.object({
        op: z.string(),
        channel_id: z.string().optional(),
        partition: z.number().optional(),
        caller: z.string().optional(),
        subject: z.string(),
      }),
    ),
    /** A request of a deployment with one partition, sent to the subject of an unpartitioned hub. */
    one_partition: z.object({ op: z.string(), caller: z.string(), subject: z.string() }),
  }),
});

export type PartitionsFixture = z.infer<typeof PartitionsFixtureSchema>;

const FIXTURE = fileURLToPath(new URL('../../../conformance/fixtures/partitions.json', import.meta.url));

/** The fixture, parsed by its schema (throws if the file does not match it). */
export function readPartitionsFixture(): PartitionsFixture {
  return PartitionsFixtureSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
}
