/**
 * Permissions violations as NATS reports them on one connection; the recorder lives in @ag2net/test-support, shared
 * with the packages' own tests of a secured server.
 */
export { ViolationRecorder } from '@ag2net/test-support';
export type { Violation } from '@ag2net/test-support';
