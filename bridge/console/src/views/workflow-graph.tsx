import { TransitionGraphDictSchema } from '@ag2net/adapters';
import type { ChannelMetadata, Envelope } from '@ag2net/protocol';
import {
  ANY_NODE,
  END_NODE,
  NODE_HEIGHT,
  NODE_WIDTH,
  edgePath,
  layoutGraph,
  pathTaken,
  spreadMarks,
} from '../logic/graph.js';

/** A workflow channel's transition graph, with the current speaker and the path its messages took. */
export function WorkflowGraph(props: {
  channel: Pick<ChannelMetadata, 'knobs' | 'creator_id' | 'state'> & {
    readonly participants: readonly Pick<ChannelMetadata['participants'][number], 'agent_id' | 'order'>[];
  };
  /** Whose turn it is (`channelTurn`): marked as the current speaker; `null` for nobody in particular. */
  next: string | null;
  envelopes: readonly Envelope[];
  myId: string | null;
  nameOf: (id: string) => string;
}) {
  const { channel, next, envelopes, myId } = props;
  const parsed = TransitionGraphDictSchema.safeParse(channel.knobs['graph']);
  if (!parsed.success) return null;
  const label = (id: string): string =>
    id === END_NODE ? 'end' : id === ANY_NODE ? 'any speaker' : id === myId ? 'you' : props.nameOf(id);
  const order = [...channel.participants].sort((a, b) => a.order - b.order).map((p) => p.agent_id);
  const layout = layoutGraph(parsed.data, { order, creatorId: channel.creator_id, nameOf: label });
  const path = pathTaken(envelopes);
  const ended = channel.state !== 'active' && channel.state !== 'pending';
  // Speakers only: the end is where a finished workflow went, shown by the channel's state, not a turn taken.
  const visited = new Set(path);
  const current = ended ? null : next;
  const at = new Map(layout.nodes.map((n) => [n.id, n]));
  const drawn = layout.edges.flatMap((edge) => {
    const from = at.get(edge.from);
    const to = at.get(edge.to);
    return from === undefined || to === undefined ? [] : [{ edge, geo: edgePath(from, to) }];
  });
  const marks = spreadMarks(drawn.map(({ geo }) => ({ x: geo.labelX, y: geo.labelY })));

  return (
    <div class="card workflow">
      <div class="workflow-head">
        <h2>Workflow</h2>
        <p data-testid="workflow-path" class="path">
          {path.length === 0 ? <span class="muted">No turns taken yet.</span> : path.map(label).join(' → ')}
        </p>
      </div>
      <div class="workflow-body">
        <div class="graph-scroll">
          <svg
            data-testid="workflow-graph"
            class="graph"
            width={layout.width}
            height={layout.height}
            viewBox={`0 0 ${layout.width} ${layout.height}`}
            role="img"
            aria-label="Transition graph"
          >
            <defs>
              <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
                <path d="M 0 0 L 10 5 L 0 10 z" class="arrow-head" />
              </marker>
            </defs>
            {drawn.map(({ edge, geo }, i) => {
              const mark = marks[i] ?? { x: geo.labelX, y: geo.labelY };
              return (
                <g key={i} class="graph-edge">
                  <title>{`${label(edge.from)} → ${label(edge.to)}: ${edge.label}`}</title>
                  <path d={geo.d} marker-end="url(#arrow)" />
                  <circle cx={mark.x} cy={mark.y} r="9" class="edge-mark" />
                  <text x={mark.x} y={mark.y + 4} text-anchor="middle" class="edge-mark-text">
                    {i + 1}
                  </text>
                </g>
              );
            })}
            {layout.nodes.map((node) => {
              const isCurrent = node.id === current;
              const isVisited = visited.has(node.id);
              const classes = [
                'graph-node',
                node.id === ANY_NODE ? 'node-any' : '',
                node.id === END_NODE ? 'node-end' : '',
              ];
              if (isVisited) classes.push('node-visited');
              if (isCurrent) classes.push('node-current');
              if (node.id === END_NODE && ended) classes.push('node-reached');
              const body = (
                <>
                  <rect x={node.x} y={node.y} width={NODE_WIDTH} height={NODE_HEIGHT} rx="8" />
                  <text x={node.x + NODE_WIDTH / 2} y={node.y + NODE_HEIGHT / 2 + 5} text-anchor="middle">
                    {label(node.id)}
                  </text>
                </>
              );
              if (node.id === ANY_NODE) {
                return (
                  <g key={node.id} class={classes.join(' ')}>
                    {body}
                  </g>
                );
              }
              return (
                <g
                  key={node.id}
                  class={classes.join(' ')}
                  data-testid="graph-node"
                  data-agent-name={node.id === END_NODE ? 'end' : props.nameOf(node.id)}
                  {...(isCurrent ? { 'data-current': 'true' } : {})}
                  {...(isVisited ? { 'data-visited': 'true' } : {})}
                >
                  <title>{isCurrent ? `${label(node.id)}: speaks next` : label(node.id)}</title>
                  {body}
                </g>
              );
            })}
          </svg>
        </div>
        <div class="graph-side">
          <ol class="graph-conditions" aria-label="Transitions">
            {drawn.map(({ edge }, i) => (
              <li key={i}>
                <span class="edge-num">{i + 1}</span>
                <span>
                  {label(edge.from)} → {label(edge.to)} <span class="muted">{edge.label}</span>
                </span>
              </li>
            ))}
          </ol>
          <p class="muted legend">
            <span class="legend-current">■</span> speaks next <span class="legend-visited">■</span> took a turn
          </p>
        </div>
      </div>
    </div>
  );
}
