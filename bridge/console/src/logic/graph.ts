import type { TransitionGraphDict, TransitionSpec } from '@ag2net/adapters';
import type { Envelope } from '@ag2net/protocol';
import { envelopeKind } from './envelopes.js';

// A workflow channel's transition graph (`knobs.graph`, AG2's `TransitionGraph.to_dict()`) laid out for an SVG.

/** The node every terminating transition points at. */
export const END_NODE = '$end';
/** Where a transition comes from when its condition names no speaker (`tool_called`, `always`, the default). */
export const ANY_NODE = '$any';

export interface GraphNode {
  /** An agent id, `END_NODE` or `ANY_NODE`. */
  readonly id: string;
  readonly x: number;
  readonly y: number;
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly label: string;
}

export interface GraphLayout {
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
  readonly width: number;
  readonly height: number;
}

export const NODE_WIDTH = 120;
export const NODE_HEIGHT = 40;
const GAP = 70;
const MARGIN = 24;
/** Room above the row for forward arcs and self-loops, and below it for backward arcs; 0 when none needs it. */
const ARC_ROOM = 64;
/**
 * Edges carry a numbered mark, not their condition's text (the conditions are listed beside the graph): texts of
 * arcs from one node ran into each other. Marks at least this far apart (centre to centre, on either axis).
 */
export const MARK_GAP = 22;

function arg(spec: TransitionSpec, key: string): string {
  const value = spec.args[key];
  return typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
}

/** What a condition says on its arrow: `from you`, `tool transfer_to_billing`, `tier = gold`, `always`. */
export function conditionLabel(spec: TransitionSpec, nameOf: (id: string) => string): string {
  switch (spec.name) {
    case 'from_speaker':
      return `from ${nameOf(arg(spec, 'agent_id'))}`;
    case 'tool_called':
      return `tool ${arg(spec, 'tool_name')}`;
    case 'context_equals':
      return `${arg(spec, 'key')} = ${arg(spec, 'value')}`;
    case 'always':
      return 'always';
    default:
      return spec.name;
  }
}

/**
 * The edges of a graph: one per transition (from the speaker a `from_speaker` condition names, else from any speaker)
 * and one for the default target (`otherwise`). Targets: `agent` → that agent; `terminate` (or a `null` then) → end,
 * with its reason; `stay` → the source itself; `revert_to_initiator` → `creatorId`; `round_robin` → each next
 * participant in `order`.
 */
export function graphEdges(
  graph: TransitionGraphDict,
  context: { readonly order: readonly string[]; readonly creatorId: string; readonly nameOf: (id: string) => string },
): GraphEdge[] {
  const edges: GraphEdge[] = [];
  const add = (from: string, then: TransitionSpec | null, label: string): void => {
    const name = then?.name ?? 'terminate';
    switch (name) {
      case 'agent':
        edges.push({ from, to: then === null ? END_NODE : arg(then, 'agent_id'), label });
        return;
      case 'terminate': {
        const reason = then === null ? '' : arg(then, 'reason');
        edges.push({ from, to: END_NODE, label: reason === '' ? label : `${label} · ${reason}` });
        return;
      }
      case 'stay':
        edges.push({ from, to: from, label: `${label} · stay` });
        return;
      case 'revert_to_initiator':
        edges.push({ from, to: context.creatorId, label: `${label} · back to initiator` });
        return;
      case 'round_robin': {
        const sources = from === ANY_NODE ? context.order : [from];
        for (const source of sources) {
          const i = context.order.indexOf(source);
          const next = context.order[(i + 1) % context.order.length];
          if (i >= 0 && next !== undefined) edges.push({ from: source, to: next, label: `${label} · round robin` });
        }
        return;
      }
      default:
        edges.push({ from, to: END_NODE, label: `${label} · ${name}` });
    }
  };
  const byPriority = [...graph.transitions].sort((a, b) => a.priority - b.priority);
  for (const t of byPriority) {
    const from = t.when.name === 'from_speaker' ? arg(t.when, 'agent_id') : ANY_NODE;
    add(from, t.then, conditionLabel(t.when, context.nameOf));
  }
  add(ANY_NODE, graph.default_target, 'otherwise');
  return edges;
}

/**
 * Lays the nodes out in one row: the "any speaker" source first when an edge needs it, then the initial speaker, the
 * other participants and targets in order of appearance, and the end last. Edges between neighbours are straight;
 * the others arc above (forward) or below (backward) the row.
 */
export function layoutGraph(
  graph: TransitionGraphDict,
  context: { readonly order: readonly string[]; readonly creatorId: string; readonly nameOf: (id: string) => string },
): GraphLayout {
  const edges = graphEdges(graph, context);
  const ids: string[] = [];
  const push = (id: string): void => {
    if (id !== '' && !ids.includes(id)) ids.push(id);
  };
  if (edges.some((e) => e.from === ANY_NODE)) push(ANY_NODE);
  push(graph.initial_speaker);
  for (const e of edges) {
    if (e.from !== END_NODE) push(e.from);
    if (e.to !== END_NODE) push(e.to);
  }
  for (const id of context.order) push(id);
  if (edges.some((e) => e.to === END_NODE)) push(END_NODE);
  const index = new Map(ids.map((id, i) => [id, i]));
  const span = (e: GraphEdge): number => (index.get(e.to) ?? 0) - (index.get(e.from) ?? 0);
  const above = edges.some((e) => span(e) > 1 || span(e) === 0);
  const below = edges.some((e) => span(e) < 0);
  const y = MARGIN + (above ? ARC_ROOM : 0);
  const nodes = ids.map((id, i) => ({ id, x: MARGIN + i * (NODE_WIDTH + GAP), y }));
  return {
    nodes,
    edges,
    width: MARGIN * 2 + ids.length * NODE_WIDTH + Math.max(0, ids.length - 1) * GAP,
    height: y + NODE_HEIGHT + (below ? ARC_ROOM : 0) + MARGIN,
  };
}

/** The SVG path of an edge between two laid-out nodes, and where its numbered mark goes (on the line). */
export function edgePath(from: GraphNode, to: GraphNode): { d: string; labelX: number; labelY: number } {
  const midY = from.y + NODE_HEIGHT / 2;
  if (from.id === to.id) {
    const cx = from.x + NODE_WIDTH / 2;
    return {
      d: `M ${cx - 15} ${from.y} C ${cx - 35} ${from.y - 45}, ${cx + 35} ${from.y - 45}, ${cx + 15} ${from.y}`,
      labelX: cx,
      labelY: from.y - 34,
    };
  }
  const forward = to.x > from.x;
  const span = Math.abs(to.x - from.x) / (NODE_WIDTH + GAP);
  const x1 = forward ? from.x + NODE_WIDTH : from.x;
  const x2 = forward ? to.x : to.x + NODE_WIDTH;
  if (forward && span <= 1) {
    return { d: `M ${x1} ${midY} L ${x2} ${midY}`, labelX: (x1 + x2) / 2, labelY: midY };
  }
  // Arcs leave from the top (forward) or bottom (backward) of the node so that they clear the row; the longer the
  // arc, the higher it rises, so arcs from one node part and their marks (at the apex) differ in x and y.
  const sx = from.x + NODE_WIDTH / 2;
  const tx = to.x + NODE_WIDTH / 2;
  const sy = forward ? from.y : from.y + NODE_HEIGHT;
  const lift = Math.min(ARC_ROOM - 12, 14 + span * 10);
  const cy = forward ? sy - lift * 2 : sy + lift * 2;
  // The apex of the quadratic Bézier (t = 0.5): halfway between the ends, `lift` off the row.
  return {
    d: `M ${sx} ${sy} Q ${(sx + tx) / 2} ${cy}, ${tx} ${sy}`,
    labelX: (sx + tx) / 2,
    labelY: (sy + cy) / 2,
  };
}

/**
 * Marks moved apart so that no two are within `gap` of each other on both axes (two edges with the same ends would
 * put theirs on one spot): each, in order, steps right by `gap` until it is clear of those placed before it.
 */
export function spreadMarks(
  marks: readonly { readonly x: number; readonly y: number }[],
  gap = MARK_GAP,
): { x: number; y: number }[] {
  const placed: { x: number; y: number }[] = [];
  for (const mark of marks) {
    let x = mark.x;
    while (placed.some((p) => Math.abs(p.x - x) < gap && Math.abs(p.y - mark.y) < gap)) x += gap;
    placed.push({ x, y: mark.y });
  }
  return placed;
}

/**
 * The path a workflow took: the senders of its messages (texts and packets) in sequence order, a repeated speaker
 * once. Events (invites, acks, context changes, violations) are not turns.
 */
export function pathTaken(envelopes: readonly Pick<Envelope, 'event_type' | 'sender_id' | 'sequence'>[]): string[] {
  const ordered = [...envelopes].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
  const path: string[] = [];
  for (const e of ordered) {
    if (envelopeKind(e.event_type) !== 'message') continue;
    if (path[path.length - 1] !== e.sender_id) path.push(e.sender_id);
  }
  return path;
}
