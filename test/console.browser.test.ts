/**
 * The web console in headless Chromium over one secured stack and one browser, with SDK agents the suites drive. Each
 * suite has a person and agents of its own, so that none sees another's channels, and closes its pages when done:
 *
 * - test/console/live.ts: the console as a newcomer meets it, live from the streams, on a phone and a laptop;
 * - test/console/workflow.ts: starting a workflow from the console, and the turn timeline from the hub's stamps;
 * - test/console/turns.ts: the turn timeline from the agents' turn reports, and the agents' models.
 */
import { describe } from 'vitest';
import { LIVE_AGENT_KEYS, LIVE_PEOPLE, liveSuite, shiftedClock } from './console/live.js';
import { TURNS_AGENT_KEYS, TURNS_PEOPLE, turnsSuite } from './console/turns.js';
import { WORKFLOW_AGENT_KEYS, WORKFLOW_PEOPLE, workflowSuite } from './console/workflow.js';
import { consoleStackPerFile } from './support/console-stack.js';

/** The hub's clock: the system's, which the live suite sets back while its archivist speaks half an hour ago. */
const hubClock = shiftedClock();
const stack = consoleStackPerFile({
  people: { ...LIVE_PEOPLE, ...WORKFLOW_PEOPLE, ...TURNS_PEOPLE },
  apiKeys: { ...LIVE_AGENT_KEYS, ...WORKFLOW_AGENT_KEYS, ...TURNS_AGENT_KEYS },
  operatorKey: 'k-operator-console',
  hub: { clock: hubClock },
});

describe('a newcomer in the console, live', () => liveSuite(stack, hubClock));
describe('workflows in the console', () => workflowSuite(stack));
describe('turn reports in the console', () => turnsSuite(stack));
