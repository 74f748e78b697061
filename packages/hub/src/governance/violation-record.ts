import type { ViolationRecord } from '@ag2net/protocol';

/** Which violation a fired key is of: the expectation (position in the manifest and name) and the occurrence. */
export interface ViolationOf {
  readonly index: number;
  readonly expectation: string;
  readonly scope: string;
}

/**
 * The identity of one fired violation: which expectation (position and name), who (`""` for a channel-wide one) and
 * which occurrence. A key fires once per channel; the record of it in the WAL is what makes it fired.
 */
export function firedKey(of: ViolationOf, violator: string): string {
  return `${of.index}/${of.expectation}/${violator}/${of.scope}`;
}

/** The fired keys a record stands for: one per violator, or one channel-wide key. */
export function keysOf(record: ViolationRecord): string[] {
  const who = record.violators.length > 0 ? record.violators : [''];
  const of = { index: record.expectation_index, expectation: record.expectation, scope: record.scope };
  return who.map((v) => firedKey(of, v));
}
