export { silentLogger } from '@ag2net/protocol/internal';
export type { Logger } from '@ag2net/protocol/internal';
