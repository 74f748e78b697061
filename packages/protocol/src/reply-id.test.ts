import { describe, expect, it } from 'vitest';
import { isReplyFormId, isReplyIdOf, replyEnvelopeId } from './reply-id.js';

describe('replyEnvelopeId', () => {
  it('is r-<trigger>-<agent> for an agent id without a dash', () => {
    expect(replyEnvelopeId('01JAGENT', '01JTRIGGER')).toBe('r-01JTRIGGER-01JAGENT');
    expect(replyEnvelopeId('bob', 'r-01JT-alice')).toBe('r-r-01JT-alice-bob');
  });

  it('hashes when the agent id has a dash, so that two pairs never share an id', () => {
    const a = replyEnvelopeId('b-c', 'a');
    const b = replyEnvelopeId('c', 'a-b');
    expect(b).toBe('r-a-b-c');
    expect(a).toBe('rh-ed58755176cc005fd2056d169f5983ab83e3436ccb3d621c5b5d8471bc77beff');
    expect(a).not.toBe(b);
  });

  it('hashes when the readable form exceeds 128 characters, and stays deterministic', () => {
    const trigger = 'T'.repeat(128);
    const id = replyEnvelopeId('bob', trigger);
    expect(id).toMatch(/^rh-[0-9a-f]{64}$/);
    expect(replyEnvelopeId('bob', trigger)).toBe(id);
    expect(replyEnvelopeId('bob2', trigger)).not.toBe(id);
  });

  it('reserves r- and rh- ids for the agent answering the trigger', () => {
    expect(isReplyFormId('r-x-y')).toBe(true);
    expect(isReplyFormId('rh-00')).toBe(true);
    expect(isReplyFormId('01JFRESH')).toBe(false);
    expect(isReplyIdOf('r-01JT-bob', 'bob', '01JT')).toBe(true);
    expect(isReplyIdOf('r-01JT-bob', 'mallory', '01JT')).toBe(false);
    expect(isReplyIdOf('r-01JT-bob', 'bob', null)).toBe(false);
    expect(isReplyIdOf('r-01JT-bob', 'bob', '01JX')).toBe(false);
  });
});
