import type { ViolationRecord } from '@ag2net/protocol';

/**
 * The identity of one fired violation: which expectation (position and name), who (`""` for a channel-wide one) and
 * which occurrence. A key fires once per channel; the record of it in the WAL is what makes it fired.
 */
export function firedKey(index: number, expectation: string, violator: string, scope: string): string {
  return `${index}/${expectation}/${violator}/${scope}`;
}

/** The fired keys a record stands for: one per violator, or one channel-wide key. */
export function keysOf(record: ViolationRecord): string[] {
  const who = record.violators.length > 0 ? record.violators : [''];
  return who.map((v) => firedKey(record.expectation_index, record.expectation, v, record.scope));
}
