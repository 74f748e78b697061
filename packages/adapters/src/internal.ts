/**
 * What other ag2net packages (the hub) share with the adapters but users must not rely on: how a channel's participant
 * list is built at creation, which only the hub does.
 */
export { buildParticipants } from './participants.js';
