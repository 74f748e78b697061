import { describe, expect, it } from 'vitest';
import { checkGraph } from './graph-check.js';
import { WORKFLOW_TEMPLATES, templateTargets } from './workflow-templates.js';

const ids: Record<string, string> = { you: 'ME', triage: 'TR', billing: 'BI', critic: 'CR' };
const context = {
  resolve: (n: string) => ids[n] ?? (Object.values(ids).includes(n) ? n : null),
  participants: ['ME', 'TR', 'BI'],
  nameOf: (id: string) => Object.entries(ids).find(([, v]) => v === id)?.[0] ?? id,
};

describe('checkGraph', () => {
  it('accepts a graph written with names, answering it with ids and AG2 defaults', () => {
    const checked = checkGraph(
      JSON.stringify({
        initial_speaker: 'you',
        transitions: [
          {
            when: { name: 'from_speaker', args: { agent_id: 'you' } },
            then: { name: 'agent', args: { agent_id: 'triage' } },
          },
        ],
      }),
      context,
    );
    expect(checked).toEqual({
      ok: true,
      graph: {
        initial_speaker: 'ME',
        transitions: [
          {
            when: { name: 'from_speaker', args: { agent_id: 'ME' } },
            then: { name: 'agent', args: { agent_id: 'TR' } },
            priority: 0,
          },
        ],
        default_target: null,
        max_turns: null,
      },
    });
  });

  it("says what is wrong: JSON, shape, names, args (in the workflow adapter's words), and speakers outside the channel", () => {
    const problems = (input: unknown): readonly string[] => {
      const checked = checkGraph(input, context);
      return checked.ok ? [] : checked.problems;
    };
    expect(problems('{')[0]).toMatch(/^not JSON: /);
    expect(problems([])).toEqual(['the graph must be an object: TransitionGraph.to_dict() of AG2']);
    expect(problems({ transitions: [] })).toEqual([
      'graph.initial_speaker: Invalid input: expected string, received undefined',
    ]);
    expect(problems({ initial_speaker: 'you', max_turns: 1.5 })).toEqual([
      'graph.max_turns: Invalid input: expected int, received number',
    ]);
    expect(
      problems({
        initial_speaker: 'you',
        transitions: [{ when: { name: 'sometimes' }, then: { name: 'agent', args: {} } }],
      }),
    ).toEqual([
      "transitions.0.when: no condition named 'sometimes' (known: always, from_speaker, tool_called, context_equals)",
      "transitions.0.then: invalid args for transition target 'agent': agent_id: Invalid input: expected string, received undefined",
    ]);
    expect(problems({ initial_speaker: 'you', default_target: { name: 'stay', args: { x: 1 } } })).toEqual([
      `default_target: invalid args for transition target 'stay': (root): Unrecognized key: "x"`,
    ]);
    expect(
      problems({ initial_speaker: 'nobody', default_target: { name: 'agent', args: { agent_id: 'critic' } } }),
    ).toEqual([
      "initial_speaker: 'nobody' is no agent the directory knows",
      'default_target.args.agent_id: critic is not in the channel: invite it',
    ]);
  });

  it('passes every template filled in with the agents it invites', () => {
    for (const template of WORKFLOW_TEMPLATES) {
      const slots = Object.fromEntries(template.slots.map((s, i) => [s.key, ['TR', 'BI'][i] ?? '']));
      const participants = ['ME', ...templateTargets(template, slots)];
      const checked = checkGraph(template.graph({ me: 'ME', slots }), { ...context, participants });
      expect(checked.ok, template.id).toBe(true);
    }
  });
});
