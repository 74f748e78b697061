/**
 * What the other ag2net packages share but users of the protocol package must not rely on: pure helpers with no
 * I/O, kept out of the public entry point so that they can change with the packages that use them.
 *
 * @example
 * ```ts
 * import { KeyedSerial } from '@ag2net/protocol/internal';
 *
 * const serial = new KeyedSerial();
 * void serial.run(channelId, () => handle(envelope)); // one channel at a time, channels in parallel
 * ```
 */
export { KeyedSerial } from './keyed-serial.js';
