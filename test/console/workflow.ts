/**
 * Starting a workflow from the web console and reading its turns (ann, with SDK agents): the support template (the
 * demo's graph) hands off from triage to billing; a pasted graph is checked before it is sent; the turn timeline
 * times each turn from the hub's stamps and shows a failed turn's cause, model and retries. The console's templates
 * and graph check are held to the adapters' own graphs and `fromDict`.
 */
import {
  AgentTarget,
  FromSpeaker,
  roundRobin,
  sequence,
  TerminateTarget,
  ToolCalled,
  Transition,
  TransitionGraph,
} from '@ag2net/adapters';
import type { AgentHandler, HubClient } from '@ag2net/client';
import { EV_PACKET, EV_TEXT, EV_TURN_FAILED, type Envelope } from '@ag2net/protocol';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkGraph } from '../../bridge/console/src/logic/graph-check.js';
import { WORKFLOW_TEMPLATES } from '../../bridge/console/src/logic/workflow-templates.js';
import { channelLog, openChannel } from '../support/bridge-calls.js';
import { acceptingInvites } from '../support/console-agents.js';
import type { ConsoleStack } from '../support/console-stack.js';
import {
  attributesOf,
  envelopes,
  goToHash,
  say,
  textOf,
  waitForChannelPage,
  waitForChannelState,
  waitForText,
} from '../support/console-ui.js';

/** The suite's person, who signs in on the bridge. */
export const WORKFLOW_PEOPLE = { ann: 'k-ann-workflow' } as const;
/** The suite's agents. */
export const WORKFLOW_AGENT_KEYS = {
  triage: 'k-triage-workflow',
  billing: 'k-billing-workflow',
  writer: 'k-writer-workflow',
  flaky: 'k-flaky-workflow',
} as const;

/** What an agent answers a trigger with: an envelope's type and data, or nothing. */
type Reply = (trigger: Envelope) => { event_type: string; event_data: Record<string, unknown> } | null;

/** The New channel form, opened afresh on the channel list, with type `workflow`. */
async function workflowForm(page: Page) {
  await goToHash(page, '#/channels');
  if ((await page.getByTestId('new-channel').count()) === 0) {
    await page.getByRole('button', { name: 'New channel' }).click();
  }
  const form = page.getByTestId('new-channel');
  await form.locator('select[name="type"]').selectOption('workflow');
  return form;
}

/** The suite's tests, on `stack`. */
export function workflowSuite(stack: ConsoleStack): void {
  let token = '';
  let ann: Page;
  /** The suite's agents' ids: an agent answers people and, when told, other agents. */
  const agentIds = new Set<string>();

  /** Accepts invites, and answers a trigger it should with `reply`. */
  const agent = (reply: Reply, options: { readonly fromAgents?: boolean } = {}): AgentHandler =>
    acceptingInvites(async (envelope, client) => {
      if (options.fromAgents !== true && agentIds.has(envelope.sender_id)) return;
      const answer = reply(envelope);
      if (answer === null) return;
      await client.sendEnvelope({ channel_id: envelope.channel_id, causation_id: envelope.envelope_id, ...answer });
    });

  beforeAll(async () => {
    const model = { provider: 'openai', model: 'gpt-4o-mini' } as const;
    const registered = async (...args: Parameters<HubClient['register']>): Promise<void> => {
      agentIds.add((await stack.sdk.register(...args)).agentId);
    };
    // Triage hands any text of a person over to billing with a packet that calls transfer_to_billing.
    await registered(
      { name: 'triage', auth: stack.auth('triage'), ...model },
      {
        handler: agent((e) =>
          e.event_type === EV_TEXT
            ? {
                event_type: EV_PACKET,
                event_data: {
                  routing: { kind: 'handoff', tool: 'transfer_to_billing', reason: 'a double charge' },
                  body: 'Billing will take care of it.',
                },
              }
            : null,
        ),
      },
    );
    await registered(
      { name: 'billing', auth: stack.auth('billing'), ...model },
      {
        handler: agent(
          (e) =>
            e.event_type === EV_PACKET
              ? { event_type: EV_TEXT, event_data: { text: 'I refunded the double charge.' } }
              : null,
          { fromAgents: true },
        ),
      },
    );
    await registered(
      { name: 'writer', auth: stack.auth('writer') },
      {
        handler: agent((e) =>
          e.event_type === EV_TEXT ? { event_type: EV_TEXT, event_data: { text: 'A first draft.' } } : null,
        ),
      },
    );
    // Flaky's model times out three times: its turn fails, with the cause, the model and the attempts.
    await registered(
      { name: 'flaky', auth: stack.auth('flaky'), ...model },
      {
        handler: agent((e) =>
          e.event_type === EV_TEXT
            ? {
                event_type: EV_TURN_FAILED,
                event_data: {
                  agent_name: 'flaky',
                  reason: 'the model timed out',
                  code: 'model_timeout',
                  attempts: 3,
                  model: 'gpt-4o-mini',
                  cause: { kind: 'timeout', exc_type: 'TimeoutError', message: 'no answer within 30 s' },
                },
              }
            : null,
        ),
      },
    );
    token = await stack.session('ann');
    ann = await stack.signIn('ann');
  }, 60_000);

  afterAll(() => stack.browser.closeContexts());

  describe('starting a workflow from the console', { timeout: 120_000 }, () => {
    it("opens the support template's workflow: triage hands off to billing, and each turn is timed", async () => {
      const form = await workflowForm(ann);
      expect(await form.locator('select[name="template"]').inputValue()).toBe('support');
      // The slots propose the agents named like them.
      expect(await form.locator('select[name="slot-triage"]').inputValue()).toBe('triage');
      expect(await form.locator('select[name="slot-billing"]').inputValue()).toBe('billing');
      const preview = ann.getByTestId('graph-preview');
      expect(await attributesOf(preview.getByTestId('graph-node'), 'data-agent-name')).toEqual([
        'ann',
        'triage',
        'billing',
        'end',
      ]);
      await form.locator('input[name="intent"]').fill('a double charge');
      await stack.browser.screenshot(ann, 'workflow-template-form');
      await form.getByRole('button', { name: 'Open' }).click();
      const channelId = await waitForChannelPage(ann);
      await ann.locator('[data-testid="graph-node"][data-current="true"][data-agent-name="ann"]').waitFor();

      await say(ann, 'I was charged twice.');
      await waitForChannelState(ann, 'closed');
      expect(await textOf(ann.getByTestId('close-reason'))).toBe('(no_route)');
      await waitForText(envelopes(ann, { sender: 'billing', kind: 'message' }), 'I refunded the double charge.');
      expect(await textOf(ann.getByTestId('workflow-path'))).toBe('you → triage → billing');

      await ann.getByTestId('tab-turns').click();
      const rows = ann.getByTestId('turn-row');
      await rows.nth(2).waitFor();
      expect(await attributesOf(rows, 'data-speaker')).toEqual(['you', 'triage', 'billing']);
      expect(await attributesOf(rows, 'data-outcome')).toEqual(['answered', 'handoff', 'answered']);
      expect(await textOf(rows.nth(1).locator('td[data-label="Outcome"]'))).toBe('handoff transfer_to_billing');
      expect(await textOf(rows.nth(1).locator('td[data-label="Model"]'))).toBe('openai / gpt-4o-mini');
      expect(await textOf(rows.nth(0).locator('td[data-label="Model"]'))).toBe('person');
      // Each turn lasts from its trigger's admission to its answer's, by the hub's clock.
      const log = await channelLog(stack.url, token, channelId);
      const at = (type: string) => Date.parse(log.find((e) => e.event_type === type)?.created_at ?? '');
      expect(await attributesOf(rows, 'data-duration-ms')).toEqual([
        String(at(EV_TEXT) - at('ag2.channel.opened')),
        String(at(EV_PACKET) - at(EV_TEXT)),
        String(Date.parse(log.filter((e) => e.event_type === EV_TEXT)[1]?.created_at ?? '') - at(EV_PACKET)),
      ]);
      await stack.browser.screenshot(ann, 'workflow-turns');
      expect(stack.browser.pageErrors).toEqual([]);
    });

    it('checks a pasted graph before opening it, then opens it', async () => {
      const form = await workflowForm(ann);
      // A template's graph as JSON, to edit: speakers by name, its agents ticked.
      await form.getByRole('button', { name: 'Edit as JSON' }).click();
      const box = form.locator('textarea[name="graph"]');
      const edited = z.record(z.string(), z.unknown()).parse(JSON.parse(await box.inputValue()));
      expect(edited['initial_speaker']).toBe('you');
      expect(await attributesOf(form.locator('input[name="target"]:checked'), 'value')).toEqual(['triage', 'billing']);

      const problems = ann.getByTestId('graph-problems');
      await box.fill('{ "initial_speaker": ');
      expect(await textOf(problems)).toMatch(/^not JSON: /);
      const graph = {
        initial_speaker: 'you',
        transitions: [
          {
            when: { name: 'from_speaker', args: { agent_id: 'you' } },
            then: { name: 'agent', args: { agent_id: 'writer' } },
          },
          {
            when: { name: 'from_speaker', args: { agent_id: 'writer' } },
            then: { name: 'terminate', args: { reason: 'drafted' } },
          },
        ],
      };
      await box.fill(JSON.stringify(graph));
      await waitForText(problems, 'writer is not in the channel');
      expect(await problems.locator('li').allTextContents()).toEqual([
        'transitions.0.then.args.agent_id: writer is not in the channel: invite it',
        'transitions.1.when.args.agent_id: writer is not in the channel: invite it',
      ]);
      for (const name of ['triage', 'billing']) await form.locator(`input[name="target"][value="${name}"]`).uncheck();
      await form.locator('input[name="target"][value="writer"]').check();
      await ann.getByTestId('graph-preview').waitFor();
      expect(await problems.count()).toBe(0);
      expect(await attributesOf(ann.getByTestId('graph-preview').getByTestId('graph-node'), 'data-agent-name')).toEqual(
        ['ann', 'writer', 'end'],
      );
      await stack.browser.screenshot(ann, 'workflow-json-form');
      await form.getByRole('button', { name: 'Open' }).click();
      await waitForChannelPage(ann);
      await ann.locator('[data-testid="graph-node"][data-current="true"][data-agent-name="ann"]').waitFor();
      await say(ann, 'Draft the release notes.');
      await waitForChannelState(ann, 'closed');
      expect(await textOf(ann.getByTestId('close-reason'))).toBe('(drafted)');
      expect(await textOf(ann.getByTestId('workflow-path'))).toBe('you → writer');
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });

  describe('the turn timeline', { timeout: 120_000 }, () => {
    it('shows a failed turn with its code, reason, cause, model and retries', async () => {
      const { channelId } = await openChannel(stack.url, token, {
        type: 'consulting',
        target: 'flaky',
        intent: 'a flaky answer',
      });
      await goToHash(ann, `#/channels/${channelId}`);
      await waitForChannelState(ann, 'active');
      await say(ann, 'Are you there?');
      await waitForChannelState(ann, 'closed');
      expect(await textOf(ann.getByTestId('close-reason'))).toBe('(turn_failed)');
      await ann.getByTestId('tab-turns').click();
      const failed = ann.locator('[data-testid="turn-row"][data-outcome="failed"]');
      expect(await failed.getAttribute('data-speaker')).toBe('flaky');
      expect(await textOf(failed.getByTestId('turn-failure'))).toBe(
        'the model timed out (model_timeout)cause: timeout: no answer within 30 s',
      );
      expect(await textOf(failed.getByTestId('turn-retries'))).toBe('2');
      expect(await textOf(failed.locator('td[data-label="Model"]'))).toBe('gpt-4o-mini');
      await stack.browser.screenshot(ann, 'turns-failed');
      expect(stack.browser.pageErrors).toEqual([]);
    });
  });

  describe("the console's workflow graphs and the adapters'", () => {
    it("builds each template as the adapters' factories and the demo build the same graph", () => {
      const [support, pipeline, rr] = WORKFLOW_TEMPLATES;
      const slots = { triage: 'T', billing: 'B', first: 'A1', second: 'A2' };
      const demo = new TransitionGraph({
        initialSpeaker: 'ME',
        transitions: [
          new Transition(new FromSpeaker('ME'), new AgentTarget('T')),
          new Transition(new ToolCalled('transfer_to_billing'), new AgentTarget('B')),
        ],
        defaultTarget: new TerminateTarget('no_route'),
        maxTurns: 6,
      });
      expect(support?.graph({ me: 'ME', slots })).toEqual(demo.toDict());
      expect(pipeline?.graph({ me: 'ME', slots })).toEqual(sequence(['ME', 'A1', 'A2']).toDict());
      expect(rr?.graph({ me: 'ME', slots })).toEqual(roundRobin(['ME', 'A1', 'A2'], { maxTurns: 6 }).toDict());
    });

    it('accepts and refuses the graphs TransitionGraph.fromDict accepts and refuses', () => {
      const spec = (name: string, args: Record<string, unknown> = {}) => ({ name, args });
      const corpus: unknown[] = [
        { initial_speaker: 'A' },
        { initial_speaker: 'A', transitions: [{ when: spec('always'), then: null }] },
        {
          initial_speaker: 'A',
          transitions: [
            { when: spec('from_speaker', { agent_id: 'A' }), then: spec('agent', { agent_id: 'B' }), priority: 2 },
          ],
        },
        {
          initial_speaker: 'A',
          transitions: [{ when: spec('context_equals', { key: 'tier', value: null }), then: spec('stay') }],
        },
        { initial_speaker: 'A', default_target: spec('revert_to_initiator'), max_turns: 4 },
        { initial_speaker: 'A', default_target: spec('terminate'), extra: 'ignored' },
        {
          initial_speaker: 'A',
          transitions: [{ when: spec('tool_called', { tool_name: 't' }), then: spec('round_robin') }],
        },
        {},
        { initial_speaker: 7 },
        { initial_speaker: 'A', max_turns: 2.5 },
        { initial_speaker: 'A', transitions: [{ when: spec('sometimes'), then: null }] },
        { initial_speaker: 'A', transitions: [{ when: spec('always', { x: 1 }), then: null }] },
        { initial_speaker: 'A', transitions: [{ when: spec('context_equals', { key: 'k' }), then: null }] },
        { initial_speaker: 'A', transitions: [{ when: spec('always'), then: spec('agent', {}) }] },
        { initial_speaker: 'A', default_target: spec('teleport') },
        { initial_speaker: 'A', transitions: [{ when: spec('always'), then: null, priority: 'high' }] },
        { initial_speaker: 'A', transitions: 'all of them' },
      ];
      const context = { resolve: (id: string) => id, participants: ['A', 'B'], nameOf: (id: string) => id };
      const verdicts = corpus.map((graph) => {
        let adapters = true;
        try {
          TransitionGraph.fromDict(graph);
        } catch {
          adapters = false;
        }
        return [JSON.stringify(graph), checkGraph(graph, context).ok, adapters];
      });
      expect(verdicts.filter(([, console, adapters]) => console !== adapters)).toEqual([]);
      expect(verdicts.map(([, ok]) => ok)).toEqual([
        ...Array<boolean>(7).fill(true),
        ...Array<boolean>(10).fill(false),
      ]);
    });
  });
}
