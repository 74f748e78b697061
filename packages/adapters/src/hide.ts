import {
  EV_EXPECTATION_VIOLATED,
  ExpectationViolatedDataSchema,
  type Envelope,
  ViolationHandlerName,
} from '@ag2net/protocol';

/**
 * The participants a hub `hide` record hides: the violators of an `ag2.expectation.violated` envelope whose
 * `on_violation` is `hide`, restricted to `order`; `null` for any other envelope. Only the hub writes these records
 * (it refuses them from clients), so adapters can trust them.
 */
export function hiddenBy(envelope: Envelope, order: readonly string[]): readonly string[] | null {
  if (envelope.event_type !== EV_EXPECTATION_VIOLATED) return null;
  if (envelope.event_data['on_violation'] !== ViolationHandlerName.Hide) return null;
  const parsed = ExpectationViolatedDataSchema.safeParse(envelope.event_data);
  if (!parsed.success) return null;
  return parsed.data.violators.filter((id) => order.includes(id));
}

/** `hidden` plus `added`, in rotation order; `undefined` (no field) when nobody is hidden. */
export function withHidden(
  order: readonly string[],
  hidden: readonly string[] | undefined,
  added: readonly string[],
): readonly string[] | undefined {
  const all = new Set([...(hidden ?? []), ...added]);
  const next = order.filter((id) => all.has(id));
  return next.length === 0 ? undefined : next;
}

/** `hidden` without `id`; `undefined` (no field) when nobody is left hidden. */
export function withoutHidden(hidden: readonly string[] | undefined, id: string): readonly string[] | undefined {
  if (hidden === undefined || !hidden.includes(id)) return hidden;
  const next = hidden.filter((h) => h !== id);
  return next.length === 0 ? undefined : next;
}

/**
 * The turn rotation's rule for hidden participants: `pick` if it is not hidden; else the first participant after it
 * in `order` (wrapping around) who is not hidden; else, when everyone is hidden, `pick` itself — hiding never leaves
 * a channel without an expected speaker, and a hidden participant may always speak.
 */
export function skipHidden(order: readonly string[], hidden: readonly string[] | undefined, pick: string): string {
  if (hidden === undefined || !hidden.includes(pick)) return pick;
  const start = order.indexOf(pick);
  if (start < 0) return pick;
  for (let step = 1; step < order.length; step += 1) {
    const candidate = order[(start + step) % order.length];
    if (candidate !== undefined && !hidden.includes(candidate)) return candidate;
  }
  return pick;
}
