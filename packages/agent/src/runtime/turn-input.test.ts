import { defaultRenderEnvelope } from '@ag2net/adapters';
import { describe, expect, it } from 'vitest';
import { text } from '../../test/fixtures.js';
import { fullTranscript, namedTranscript } from '../views/policies.js';
import { renderCurrentInput, type CurrentInputOptions } from './turn-input.js';

const adapter = { renderEnvelope: defaultRenderEnvelope, extractTurnInput: () => 'from the adapter' };
const options = (extra: Partial<CurrentInputOptions> = {}): CurrentInputOptions => ({
  view: fullTranscript(),
  adapter,
  participantId: 'bob',
  channel: null,
  nameFor: (id) => (id === 'alice' ? 'Alice' : id),
  ...extra,
});

describe('renderCurrentInput (AG2 _render_current_input)', () => {
  it("takes another participant's message as the view renders it", async () => {
    expect(await renderCurrentInput(text('alice', 'hi'), options())).toBe('hi');
    expect(await renderCurrentInput(text('alice', 'hi'), options({ view: namedTranscript() }))).toBe('[Alice]: hi');
  });

  it("takes the participant's own message as its content", async () => {
    expect(await renderCurrentInput(text('bob', 'mine'), options({ view: namedTranscript() }))).toBe('mine');
  });

  it('falls back to the adapter when the view projects nothing', async () => {
    const hidden = { ...adapter, renderEnvelope: () => null };
    expect(await renderCurrentInput(text('alice', 'hi'), options({ adapter: hidden }))).toBe('from the adapter');
  });

  it('falls back to the adapter when the view projects a summary', async () => {
    const summarising = {
      name: 'summary-only',
      project: () => [{ kind: 'summary' as const, summary: 'x', eventCount: 1 }],
    };
    expect(await renderCurrentInput(text('alice', 'hi'), options({ view: summarising }))).toBe('from the adapter');
  });
});
