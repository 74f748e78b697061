import { ChannelManifestSchema, type ChannelManifest, ViolationHandlerName } from '@ag2net/protocol';

/** The workflow adapter's manifest type; its registry key is `('workflow', 1)`. */
export const WORKFLOW_TYPE = 'workflow';

/** AG2's workflow manifest: 2+ participants, a `graph` knob, named windowed views and turn deadlines. */
export const WORKFLOW_MANIFEST: ChannelManifest = ChannelManifestSchema.parse({
  type: WORKFLOW_TYPE,
  version: 1,
  participants: { min: 2 },
  knobs_schema: { graph: 'TransitionGraph' },
  default_view_policy: 'named_windowed_summary',
  expectations: [
    { name: 'turn_within', on_violation: ViolationHandlerName.Warn, params: { seconds: 120 } },
    { name: 'turn_within', on_violation: ViolationHandlerName.AutoClose, params: { seconds: 600 } },
  ],
});
