/**
 * The web console in headless Chromium over a secured stack that ran `npm start`'s demo: the operator finds the demo's
 * agents and channels and the workflow's graph; a person signs in with a link, talks to the expert and sees its
 * answer live, watches a workflow hand off from triage to billing live; another person sees none of it.
 */
import { AgentTarget, FromSpeaker, TerminateTarget, ToolCalled, Transition, TransitionGraph } from '@ag2net/adapters';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEMO_AGENTS, runDemo } from '../scripts/stack/demo.js';
import { holdFile } from './fixtures/console/tools.js';
import { call } from './support/bridge-http.js';
import { openChannel } from './support/bridge-calls.js';
import { UI_TIMEOUT_MS } from './support/browser.js';
import { consoleStackPerFile } from './support/console-stack.js';
import {
  attributesOf,
  envelopes,
  goToHash,
  navigate,
  openChannelWithForm,
  say,
  signInWithForm,
  waitForChannelState,
  waitForHash,
  waitForText,
} from './support/console-ui.js';
import { startRunner, type ServiceProcess } from './support/processes.js';

const AGENT_KEYS = Object.fromEntries(DEMO_AGENTS.map((name) => [name, `k-${name}`]));
const PEOPLE = { ann: 'k-ann-console', bob: 'k-bob-console' } as const;
/** The demo's own person (`you`) registers with the hub directly, as the demo's agents do. */
const DIRECT_KEYS = { ...AGENT_KEYS, you: 'k-you' };
const OPERATOR_KEY = 'k-operator-console-demo';
/** The expert's second scripted answer (test/fixtures/console/agents.yaml): the demo used the first. */
const EXPERT_ANSWER =
  'Consensus lets a group of replicas agree on one order of writes, so any of them can take over after a crash.';

const MeReply = z.object({ agent_id: z.string() });
const PassportReply = z.object({ passport: z.object({ agent_id: z.string() }) });

const stack = consoleStackPerFile({ people: PEOPLE, apiKeys: DIRECT_KEYS, operatorKey: OPERATOR_KEY });
let dir = '';
let runner: ServiceProcess | undefined;
let ann: Page;
/** The consulting channel ann opens with the expert. */
let annChannel = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-console-demo-'));
  const keysFile = join(dir, 'agent-keys.json');
  await writeFile(keysFile, JSON.stringify(AGENT_KEYS), { mode: 0o600 });
  await mkdir(join(dir, 'people'));
  const secured = stack.secured;
  runner = startRunner({
    natsUrl: secured.url,
    prefix: secured.prefix,
    configPath: 'test/fixtures/console/agents.yaml',
    name: 'console-runner',
    extraArgs: ['--creds', secured.paths.registrantCreds, '--creds-dir', join(dir, 'agents'), '--api-keys', keysFile],
  });
  // The demo waits for the runner's agents to register, then drives one channel of each type to its end.
  await runDemo({
    natsUrl: secured.url,
    prefix: secured.prefix,
    say: () => undefined,
    turnTimeoutMs: 20_000,
    auth: {
      creds: secured.paths.registrantCreds,
      apiKeys: { ...DIRECT_KEYS, ...PEOPLE },
      credsDir: join(dir, 'people'),
    },
  });
}, 90_000);

afterAll(async () => {
  await runner?.stop('SIGKILL');
  await rm(holdFile(runner?.child.pid ?? 0), { force: true });
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('the web console over the demo', { timeout: 120_000 }, () => {
  it('shows the operator the demo agents, its four ended channels and the workflow path you → triage → billing', async () => {
    const page = await stack.browser.person('operator', `${stack.url}/#/signin`);
    await page.getByTestId('signin').locator('input[name="name"]').fill('$operator');
    await page.getByTestId('signin').locator('input[name="api_key"]').fill('not-the-key');
    await page.getByTestId('signin').getByRole('button', { name: 'Sign in' }).click();
    expect(await waitForText(page.getByTestId('error'), 'auth_failed')).toContain('auth_failed');
    await signInWithForm(page, '$operator', OPERATOR_KEY);
    expect(await page.getByTestId('whoami').textContent()).toContain('operator');

    await navigate(page, 'Agents');
    const agentRows = page.getByTestId('agent-row');
    await agentRows.nth(DEMO_AGENTS.length - 1).waitFor();
    expect((await attributesOf(agentRows, 'data-agent-name')).sort()).toEqual([...DEMO_AGENTS].sort());
    await stack.browser.screenshot(page, 'agents');

    await page.locator('[data-testid="agent-row"][data-agent-name="expert"]').getByRole('link').first().click();
    expect(await page.getByTestId('agent-name').textContent()).toContain('expert');
    // The resume (the claimed capabilities and the track record) arrives after the passport.
    await waitForText(page.getByTestId('capabilities'), 'distributed-systems');
    await page.getByTestId('resume').waitFor();
    await stack.browser.screenshot(page, 'agent-expert');

    await navigate(page, 'Channels');
    const channelRows = page.getByTestId('channel-row');
    await channelRows.nth(3).waitFor();
    expect((await attributesOf(channelRows, 'data-type')).sort()).toEqual([
      'consulting',
      'conversation',
      'discussion',
      'workflow',
    ]);
    expect(await attributesOf(channelRows, 'data-state')).toEqual(['closed', 'closed', 'closed', 'closed']);
    const workflowRow = page.locator('[data-testid="channel-row"][data-type="workflow"]');
    expect(await workflowRow.textContent()).toContain('you, triage, billing');
    await stack.browser.screenshot(page, 'channels');

    await workflowRow.getByRole('link').first().click();
    await page.getByTestId('workflow-graph').waitFor();
    const visited = page.locator('[data-testid="graph-node"][data-visited="true"]');
    await visited.nth(1).waitFor();
    expect(await attributesOf(visited, 'data-agent-name')).toEqual(['you', 'triage', 'billing']);
    expect((await page.getByTestId('workflow-path').textContent())?.trim()).toBe('you → triage → billing');
    await waitForChannelState(page, 'closed');
    await stack.browser.screenshot(page, 'workflow-demo');
    expect(stack.browser.pageErrors).toEqual([]);
  });

  it('signs ann in from a link that leaves no key in the URL, and shows the expert answering her live', async () => {
    ann = await stack.browser.person('ann', stack.signInLink('ann'));
    expect(await waitForHash(ann, '#/channels')).toBe('#/channels');
    expect(await ann.getByTestId('whoami').textContent()).toContain('ann');
    expect(ann.url()).not.toContain(PEOPLE.ann);

    annChannel = await openChannelWithForm(ann, {
      type: 'consulting',
      targets: ['expert'],
      intent: 'a question about consensus',
    });

    await say(ann, 'What does consensus give a replicated log?');
    const answer = await waitForText(envelopes(ann, { sender: 'expert', kind: 'message' }), EXPERT_ANSWER);
    expect(answer).toContain(EXPERT_ANSWER);
    expect(await envelopes(ann, { sender: 'ann', kind: 'message' }).filter({ hasText: 'consensus' }).count()).toBe(1);
    await waitForChannelState(ann, 'closed');
    // No raw JSON unless asked for.
    const transcript = ann.getByTestId('transcript');
    expect(await transcript.textContent()).not.toContain('"envelope_id"');
    await stack.browser.screenshot(ann, 'consulting-ann');
    await ann.getByRole('button', { name: 'Raw JSON' }).click();
    await waitForText(transcript, `"text": "${EXPERT_ANSWER}"`);
    await ann.getByRole('button', { name: 'Raw JSON' }).click();
    expect(stack.browser.pageErrors).toEqual([]);
  });

  it('shows ann a workflow opened through the API hand off from triage to billing, live, and end', async () => {
    const token = await stack.session('ann');
    const idOf = async (name: string): Promise<string> =>
      PassportReply.parse((await call(stack.url, `/v1/agents/${name}`, { token })).body).passport.agent_id;
    const annId = MeReply.parse((await call(stack.url, '/v1/me', { token })).body).agent_id;
    const [triage, billing] = [await idOf('triage'), await idOf('billing')];
    // The demo's graph (scripts/stack/demo.ts) with ann as the customer.
    const graph = new TransitionGraph({
      initialSpeaker: annId,
      transitions: [
        new Transition(new FromSpeaker(annId), new AgentTarget(triage)),
        new Transition(new ToolCalled('transfer_to_billing'), new AgentTarget(billing)),
      ],
      defaultTarget: new TerminateTarget('no_route'),
      maxTurns: 6,
    });
    const { channelId } = await openChannel(stack.url, token, {
      type: 'workflow',
      target: ['triage', 'billing'],
      knobs: { graph: graph.toDict() },
    });

    await goToHash(ann, `#/channels/${channelId}`);
    await ann.getByTestId('workflow-graph').waitFor();
    await ann.locator('[data-testid="graph-node"][data-current="true"][data-agent-name="ann"]').waitFor();
    // The console names the signed-in person `you`.
    await ann.getByTestId('turn').filter({ hasText: 'you' }).waitFor();

    // Billing's resolve_case waits while this file exists (test/fixtures/console/tools.ts): billing stays the current
    // speaker until the browser has shown it.
    const hold = holdFile(runner?.child.pid ?? 0);
    await writeFile(hold, '');
    try {
      await say(ann, 'I paid twice for one order.');
      await ann
        .locator('[data-testid="graph-node"][data-current="true"][data-agent-name="billing"]')
        .waitFor({ timeout: UI_TIMEOUT_MS });
      await ann.getByTestId('turn').filter({ hasText: 'billing' }).waitFor();
      // Triage's packet: marked as a handoff by its tool, with triage's words to the customer.
      const handoff = envelopes(ann, { sender: 'triage', 'event-type': 'ag2.packet' });
      expect(await waitForText(handoff, 'transfer_to_billing')).toContain('double payment');
      await stack.browser.screenshot(ann, 'workflow-handoff');
    } finally {
      await rm(hold, { force: true });
    }
    await waitForChannelState(ann, 'closed');
    const visited = ann.locator('[data-testid="graph-node"][data-visited="true"]');
    expect(await attributesOf(visited, 'data-agent-name')).toEqual(['ann', 'triage', 'billing']);
    // Ann's own turn reads `you` in her path.
    expect((await ann.getByTestId('workflow-path').textContent())?.trim()).toBe('you → triage → billing');
    await waitForText(envelopes(ann, { sender: 'billing', kind: 'message' }), 'I refunded the double payment');
    expect(await ann.getByTestId('composer').count()).toBe(0);
    await stack.browser.screenshot(ann, 'workflow-ended');
    expect(stack.browser.pageErrors).toEqual([]);
  });

  it("keeps ann's channel from another person: not in bob's list, and its page shows an error", async () => {
    // Bob has a channel of his own, so that his list has something to show once it has loaded.
    const token = await stack.session('bob');
    const bobChannel = (await openChannel(stack.url, token, { type: 'conversation', target: 'pal' })).channelId;

    const bob = await stack.signIn('bob');
    await bob.getByTestId('whoami').filter({ hasText: 'bob' }).waitFor();
    await bob.locator(`[data-testid="channel-row"][data-channel-id="${bobChannel}"]`).waitFor();
    expect(await attributesOf(bob.getByTestId('channel-row'), 'data-channel-id')).toEqual([bobChannel]);

    await goToHash(bob, `#/channels/${annChannel}`);
    // The hub's answer, by its code: to bob, who is not in it, the channel is not there (the live stream's own failure
    // may show first; the page's next read shows it).
    expect(await waitForText(bob.getByTestId('error'), 'not_found')).toContain(`channel not found: ${annChannel}`);
    expect(await envelopes(bob).count()).toBe(0);
    await stack.browser.screenshot(bob, 'privacy-bob');
    expect(stack.browser.pageErrors).toEqual([]);
  });
});
