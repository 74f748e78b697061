import { describe, expect, it } from 'vitest';
import { Always, ContextEquals, FromSpeaker, ToolCalled } from './conditions.js';
import { WorkflowGraphError } from './errors.js';
import { packetEnv, stateWith, textEnv } from '../../test/workflow-helpers.js';

const state = stateWith({});

describe('transition conditions', () => {
  it('Always fires on every envelope', () => {
    expect(new Always().evaluate()).toBe(true);
  });

  it('FromSpeaker fires only for its sender', () => {
    const cond = new FromSpeaker('alice');
    expect(cond.evaluate(state, textEnv('alice', 'x'))).toBe(true);
    expect(cond.evaluate(state, textEnv('bob', 'x'))).toBe(false);
  });

  it('ToolCalled fires on a packet whose routing.tool matches, not on other tool names', () => {
    const cond = new ToolCalled('escalate');
    expect(cond.evaluate(state, packetEnv('a', { routing: { kind: 'handoff', tool: 'escalate' } }))).toBe(true);
    expect(cond.evaluate(state, packetEnv('a', { routing: { kind: 'handoff', tool: 'other' } }))).toBe(false);
    expect(cond.evaluate(state, packetEnv('a', { body: 'no routing' }))).toBe(false);
  });

  it('ToolCalled never fires on EV_TEXT', () => {
    expect(new ToolCalled('escalate').evaluate(state, textEnv('a', 'escalate'))).toBe(false);
  });

  it('ContextEquals compares a context variable and treats a missing key as null', () => {
    const withRoute = stateWith({ context_vars: { route: 'security', gone: null } });
    expect(new ContextEquals('route', 'security').evaluate(withRoute)).toBe(true);
    expect(new ContextEquals('route', 'billing').evaluate(withRoute)).toBe(false);
    expect(new ContextEquals('missing', null).evaluate(withRoute)).toBe(true);
    expect(new ContextEquals('gone', null).evaluate(withRoute)).toBe(true);
    expect(new ContextEquals('route', null).evaluate(withRoute)).toBe(false);
  });

  it("ContextEquals compares like Python's ==: deep for lists and dicts, True equal to 1", () => {
    const vars = stateWith({ context_vars: { tags: ['a', { b: 1 }], flag: true, n: 0 } });
    expect(new ContextEquals('tags', ['a', { b: 1 }]).evaluate(vars)).toBe(true);
    expect(new ContextEquals('tags', ['a', { b: 2 }]).evaluate(vars)).toBe(false);
    expect(new ContextEquals('flag', 1).evaluate(vars)).toBe(true);
    expect(new ContextEquals('n', false).evaluate(vars)).toBe(true);
    expect(new ContextEquals('n', '0').evaluate(vars)).toBe(false);
  });

  it('ContextEquals stores an undefined value as null', () => {
    expect(new ContextEquals('k', undefined).args()).toEqual({ key: 'k', value: null });
  });

  it('conditions carry AG2 registry names and snake_case args', () => {
    const conditions = [new Always(), new FromSpeaker('bob'), new ToolCalled('go'), new ContextEquals('k', 3)];
    expect(conditions.map((c) => [c.name, c.args()])).toEqual([
      ['always', {}],
      ['from_speaker', { agent_id: 'bob' }],
      ['tool_called', { tool_name: 'go' }],
      ['context_equals', { key: 'k', value: 3 }],
    ]);
  });

  it('fromArgs builds conditions and rejects bad args with a WorkflowGraphError', () => {
    expect(ContextEquals.fromArgs({ key: 'route', value: null })).toEqual(new ContextEquals('route', null));
    expect(ToolCalled.fromArgs({ tool_name: 'go' })).toEqual(new ToolCalled('go'));
    expect(() => ContextEquals.fromArgs({ key: 'route' })).toThrow(
      new WorkflowGraphError(
        "invalid args for transition condition 'context_equals': value: Invalid input: expected a value (null matches a missing key), received undefined",
      ),
    );
    expect(() => FromSpeaker.fromArgs({ agent_id: 'a', extra: 1 })).toThrow(
      'invalid args for transition condition \'from_speaker\': (root): Unrecognized key: "extra"',
    );
    expect(() => Always.fromArgs({ x: 1 })).toThrow(WorkflowGraphError);
  });
});
