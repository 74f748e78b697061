import type { TransitionGraphDict } from '@ag2net/adapters';

// Workflow graphs a person can start from the New channel form without writing one: each fills its slots with
// agents the person picks and puts the person first. They are AG2's `TransitionGraph.to_dict()` dicts, the same as
// the adapters' factories build (test/console/workflow.ts compares them).

/** One agent a template needs, and the directory name it proposes when there is one by that name. */
export interface TemplateSlot {
  readonly key: string;
  readonly label: string;
  readonly suggested: string;
}

export interface WorkflowTemplate {
  readonly id: string;
  readonly title: string;
  /** One sentence on how the turns go. */
  readonly summary: string;
  readonly slots: readonly TemplateSlot[];
  /** The graph with `me` first and each slot's agent id (`slots[key]`). */
  readonly graph: (ids: {
    readonly me: string;
    readonly slots: Readonly<Record<string, string>>;
  }) => TransitionGraphDict;
}

const spec = (name: string, args: Readonly<Record<string, unknown>> = {}) => ({ name, args });
const fromSpeaker = (id: string) => spec('from_speaker', { agent_id: id });
const agent = (id: string) => spec('agent', { agent_id: id });

function slot(slots: Readonly<Record<string, string>>, key: string): string {
  return slots[key] ?? '';
}

/** The demo's workflow (scripts/stack/demo.ts): triage answers the person, hands money matters to billing. */
const SUPPORT: WorkflowTemplate = {
  id: 'support',
  title: 'Support desk: triage hands off to billing',
  summary:
    'You write to triage; when triage calls transfer_to_billing, billing takes over; anything else ends the case (at most 6 turns).',
  slots: [
    { key: 'triage', label: 'Triage agent', suggested: 'triage' },
    { key: 'billing', label: 'Billing agent', suggested: 'billing' },
  ],
  graph: ({ me, slots }) => ({
    initial_speaker: me,
    transitions: [
      { when: fromSpeaker(me), then: agent(slot(slots, 'triage')), priority: 0 },
      {
        when: spec('tool_called', { tool_name: 'transfer_to_billing' }),
        then: agent(slot(slots, 'billing')),
        priority: 0,
      },
    ],
    default_target: spec('terminate', { reason: 'no_route' }),
    max_turns: 6,
  }),
};

/** AG2's `TransitionGraph.sequence([you, first, second])`. */
const PIPELINE: WorkflowTemplate = {
  id: 'pipeline',
  title: 'Pipeline: you, then the first agent, then the second',
  summary: 'Each speaks once, in order; the workflow ends after the second agent (sequence_complete).',
  slots: [
    { key: 'first', label: 'First agent', suggested: '' },
    { key: 'second', label: 'Second agent', suggested: '' },
  ],
  graph: ({ me, slots }) => ({
    initial_speaker: me,
    transitions: [
      { when: fromSpeaker(me), then: agent(slot(slots, 'first')), priority: 0 },
      { when: fromSpeaker(slot(slots, 'first')), then: agent(slot(slots, 'second')), priority: 0 },
    ],
    default_target: spec('terminate', { reason: 'sequence_complete' }),
    max_turns: 3,
  }),
};

/** AG2's `round_robin([you, first, second], max_turns=6)`. */
const ROUND_ROBIN: WorkflowTemplate = {
  id: 'round_robin',
  title: 'Round robin: you and two agents in turn',
  summary: 'You, the first agent, the second agent, you again, … until 6 turns were taken.',
  slots: [
    { key: 'first', label: 'First agent', suggested: '' },
    { key: 'second', label: 'Second agent', suggested: '' },
  ],
  graph: ({ me }) => ({
    initial_speaker: me,
    transitions: [{ when: spec('always'), then: spec('round_robin'), priority: 0 }],
    default_target: spec('terminate', { reason: 'round_robin_complete' }),
    max_turns: 6,
  }),
};

export const WORKFLOW_TEMPLATES: readonly WorkflowTemplate[] = [SUPPORT, PIPELINE, ROUND_ROBIN];

/** The invitees of a template filled in: its slots' agents, each once, in slot order. */
export function templateTargets(template: WorkflowTemplate, slots: Readonly<Record<string, string>>): string[] {
  return [...new Set(template.slots.map((s) => slot(slots, s.key)).filter((id) => id !== ''))];
}
