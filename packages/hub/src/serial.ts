// The hub's per-channel serialization is the shared helper of the protocol's internal entry point.
export { KeyedSerial } from '@ag2net/protocol/internal';
