import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TransitionGraph, roundRobin, sequence } from '../src/index.js';

// conformance/fixtures/graphs.json: workflow graphs in AG2's serialisation. The Python tests check the same file
// against the real AG2 `TransitionGraph` (its factories write these bytes, it reads each back unchanged).
const FILE = fileURLToPath(new URL('../../../conformance/fixtures/graphs.json', import.meta.url));

const FactorySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('round_robin'), participants: z.array(z.string()), max_turns: z.number().nullable() }),
  z.object({ kind: z.literal('sequence'), steps: z.array(z.string()) }),
]);
const GraphCasesSchema = z.array(z.object({ name: z.string(), factory: FactorySchema.nullable(), dumps: z.string() }));

function made(factory: z.infer<typeof FactorySchema>): TransitionGraph {
  return factory.kind === 'round_robin'
    ? roundRobin(factory.participants, { maxTurns: factory.max_turns })
    : sequence(factory.steps);
}

describe('conformance graphs (TypeScript side)', () => {
  const cases = GraphCasesSchema.parse(JSON.parse(readFileSync(FILE, 'utf8')));

  it('the factories write the fixture bytes', () => {
    const built = cases.filter((c) => c.factory !== null);
    expect(built.map((c) => c.name)).toEqual(['round_robin', 'round_robin-uncapped', 'sequence']);
    for (const c of built) if (c.factory !== null) expect(made(c.factory).dumps()).toBe(c.dumps);
  });

  it('reads every graph back unchanged', () => {
    expect(cases.length).toBe(4);
    for (const c of cases) expect(TransitionGraph.loads(c.dumps).dumps()).toBe(c.dumps);
  });
});
