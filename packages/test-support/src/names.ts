import { randomBytes } from 'node:crypto';

/** A name unique to this test run, safe as a NATS subject token and stream name: `<prefix>_<hex>`. */
export function uniqueName(prefix = 't'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}
