import { createUser, fromPublic, fromSeed, type KeyPair } from '@nats-io/nkeys';

/** An nkey pair as text: the public key (shared) and the seed (secret; it never leaves its owner's process). */
export interface NkeyPair {
  /** `U…` for a user, `A…` for an account, `O…` for an operator. */
  readonly publicKey: string;
  /** `SU…`, `SA…` or `SO…`. */
  readonly seed: string;
}

/**
 * Creates an identity's nkey pair. The identity keeps the seed and sends only the public key to the hub, which
 * issues a user JWT for it; whoever holds the JWT without the seed cannot connect.
 */
export function createIdentityKeys(): NkeyPair {
  return pairOf(createUser());
}

/** The pair of a seed (throws on a malformed seed). */
export function keysFromSeed(seed: string): NkeyPair {
  return pairOf(fromSeed(new TextEncoder().encode(seed.trim())));
}

/** Whether `key` is a well-formed public key of the given kind (`U` user, `A` account, `O` operator). */
export function isPublicKey(key: string, kind: 'U' | 'A' | 'O'): boolean {
  if (!key.startsWith(kind)) return false;
  try {
    fromPublic(key);
    return true;
  } catch {
    return false;
  }
}

export function pairOf(kp: KeyPair): NkeyPair {
  return { publicKey: kp.getPublicKey(), seed: new TextDecoder().decode(kp.getSeed()) };
}
