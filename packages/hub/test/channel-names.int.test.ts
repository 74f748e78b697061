import { sequence } from '@ag2net/adapters';
import { natsPerFile } from '@ag2net/test-support';
import { describe, expect, it } from 'vitest';
import { asOperator, failure, openNet, register, say } from './support.js';

const nats = natsPerFile();

describe('names in channel creation', () => {
  it('resolves participant names and the names of a workflow graph to ids', async () => {
    await using net = await openNet(nats.url);
    const me = await register(net, 'me');
    const researcher = await register(net, 'researcher');
    const graph = sequence(['me', 'researcher']).toDict();
    const { channel } = await net.rpc.call(
      'createChannel',
      { type: 'workflow', participants: ['researcher'], knobs: { graph } },
      { caller: me.id },
    );
    expect(channel.participants.map((p) => p.agent_id)).toEqual([me.id, researcher.id]);
    expect(channel.knobs['graph']).toEqual({
      initial_speaker: me.id,
      transitions: [
        {
          when: { name: 'from_speaker', args: { agent_id: me.id } },
          then: { name: 'agent', args: { agent_id: researcher.id } },
          priority: 0,
        },
      ],
      default_target: { name: 'terminate', args: { reason: 'sequence_complete' } },
      max_turns: 2,
    });
    await say(net, me, channel.channel_id, 'Find the sources.');
    const { state } = await net.rpc.call('adapterState', { channel_id: channel.channel_id }, asOperator);
    expect(state).toMatchObject({ expected_next_speaker: researcher.id });
  });

  it('refuses a workflow graph that names an unknown agent with not_found naming it', async () => {
    await using net = await openNet(nats.url);
    const me = await register(net, 'me');
    await register(net, 'researcher');
    const graph = sequence(['me', 'researcher', 'nobody']).toDict();
    expect(
      await failure(
        net.rpc.call(
          'createChannel',
          { type: 'workflow', participants: ['researcher'], knobs: { graph } },
          { caller: me.id },
        ),
      ),
    ).toEqual({ code: 'not_found', message: "workflow graph names an unknown agent: 'nobody'" });
  });

  it('refuses an unknown participant name with not_found naming it', async () => {
    await using net = await openNet(nats.url);
    const me = await register(net, 'me');
    expect(
      await failure(net.rpc.call('createChannel', { type: 'consulting', participants: ['nobody'] }, { caller: me.id })),
    ).toEqual({ code: 'not_found', message: 'participant not registered: nobody' });
  });
});
