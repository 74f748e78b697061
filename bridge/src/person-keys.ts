import { keysFromSeed } from '@ag2net/auth';

/**
 * A person's key is `@ag2net/auth`'s `personSeed`: the `ag2net` command derives the same one beside the bridge's
 * secret, so that a person is one identity in the terminal and in the console.
 */
export { personSeed } from '@ag2net/auth';

/** The public key (`U…`) of a user seed. */
export function publicKeyOfSeed(seed: string): string {
  return keysFromSeed(seed).publicKey;
}
