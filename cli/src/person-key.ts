import { credsFile, keysFromSeed, parseCredsFile, personSeed } from '@ag2net/auth';
import type { HubClient, HumanClient } from '@ag2net/client';
import { Ag2netError, ChannelState, ErrorCode, ErrorReason, HubError, ProtocolError, newId } from '@ag2net/protocol';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { BRIDGE_SECRET_FILE, type StackFiles } from './stack.js';

/** The fewest bytes of a secret the bridge starts with: a shorter file is no running bridge's secret. */
const MIN_SECRET_BYTES = 32;

/** The close reason of the channels a person's replaced identity had open. */
export const REKEY_CLOSE_REASON = 'person_rekeyed';

/**
 * The person's key on a stack `npm start` runs: the seed the bridge derives for `name` (`personSeed`) from the secret
 * in the auth directory (`bridge-secret`), read as the bridge reads it (trimmed text, at least 32 bytes), so that the
 * person who chats from the terminal is the person who signs in to the console. `null` when there is no such secret:
 * the person's key is then one of its own.
 */
export async function stackPersonSeed(stack: StackFiles, name: string): Promise<string | null> {
  const secret = (await readIfExists(stack.auth(BRIDGE_SECRET_FILE)))?.trim() ?? '';
  if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) return null;
  return personSeed(new TextEncoder().encode(secret), name);
}

/** What a person's credentials file holds: no file, the key of `seed`, or another key (or no readable one). */
export type HeldKey = 'none' | 'same' | 'other';

/** Whether the credentials file at `credsPath` holds the key of `seed`. */
export async function heldKey(credsPath: string, seed: string): Promise<HeldKey> {
  const text = await readIfExists(credsPath);
  if (text === null) return 'none';
  try {
    return keysFromSeed(parseCredsFile(text).seed).publicKey === keysFromSeed(seed).publicKey ? 'same' : 'other';
  } catch {
    return 'other';
  }
}

/** The person is registered with another key than the one it asked for credentials with. Code `auth_failed`. */
export class OtherKeyError extends Ag2netError {
  override readonly name = 'OtherKeyError';

  constructor(
    readonly person: string,
    options?: ErrorOptions,
  ) {
    super(ErrorCode.AuthFailed, `${person} is registered with another key`, options);
  }
}

/** Options of `obtainPersonCredentials`. */
export interface PersonCredentialsOptions {
  /** Connected as the registrant. */
  readonly hub: HubClient;
  readonly name: string;
  /** The person's admission key; without one the hub refuses it on a stack that admits by API keys. */
  readonly apiKey: string | undefined;
  /** The nkey seed the person holds. */
  readonly seed: string;
  /** Written (0600) with the seed and the JWT the hub issued for it. */
  readonly credsPath: string;
}

/**
 * Asks the hub for the person's credentials for the key of `seed` and writes them to `credsPath`: `register` with its
 * public key when the name is new, else `attach` with it (registered with that key by the console, or by a chat
 * before). Rejects with `OtherKeyError` when the name is registered with another key, and with the hub's refusal
 * (`auth_failed`) when it does not admit the person's API key; `register` checks that key first.
 */
export async function obtainPersonCredentials(options: PersonCredentialsOptions): Promise<'registered' | 'attached'> {
  const { hub, name, apiKey, seed } = options;
  const publicKey = keysFromSeed(seed).publicKey;
  const auth = apiKey === undefined ? {} : { auth: { scheme: 'api_key', claim: { token: apiKey } } };
  let outcome: 'registered' | 'attached' = 'registered';
  let reply;
  try {
    reply = await hub.call('register', {
      passport: { name, kind: 'human', agent_id: newId(), ...auth },
      public_key: publicKey,
    });
  } catch (err) {
    if (!(err instanceof ProtocolError) || err.details?.['reason'] !== ErrorReason.NameTaken) throw err;
    outcome = 'attached';
    try {
      reply = await hub.call('attach', { name_or_id: name, public_key: publicKey, ...auth });
    } catch (refused) {
      // `register` admitted the API key: a refusal now is the key the name is registered with.
      if (refused instanceof HubError && refused.code === ErrorCode.AuthFailed) {
        throw new OtherKeyError(name, { cause: refused });
      }
      throw refused;
    }
  }
  if (reply.credentials === null) throw new Error(`the hub issued no credentials to ${name} on a secured stack`);
  await writeFile(options.credsPath, credsFile(reply.credentials.jwt, seed), { mode: 0o600 });
  await chmod(options.credsPath, 0o600);
  return outcome;
}

/**
 * Retires the identity of the credentials at `credsPath`: attaches it with them, closes the channels it has open
 * (`REKEY_CLOSE_REASON`; their agents would otherwise wait for an identity that is gone), unregisters it and removes
 * the file, so that the name is free for the person's key. Its channels stay in the hub's history, for the operator.
 * Resolves with how many channels it closed.
 */
export async function retireIdentity(
  hub: HubClient,
  person: { readonly name: string; readonly apiKey: string | undefined; readonly credsPath: string },
): Promise<number> {
  const { name, apiKey, credsPath } = person;
  const auth = apiKey === undefined ? {} : { auth: { scheme: 'api_key', claim: { token: apiKey } } };
  const old = await hub.attachHuman(name, { credsPath, passport: { name, kind: 'human', ...auth } });
  const closed = await closeOpenChannels(old);
  await old.unregister();
  await rm(credsPath, { force: true });
  return closed;
}

/** Closes the person's pending and active channels; a channel the hub will not close yet ends by its own timeouts. */
async function closeOpenChannels(person: HumanClient): Promise<number> {
  let closed = 0;
  for (const state of [ChannelState.Pending, ChannelState.Active]) {
    for (const channel of await person.listChannels({ agent_id: person.agentId, state })) {
      const done = await person.closeChannel(channel.channel_id, REKEY_CLOSE_REASON).then(
        () => true,
        () => false,
      );
      if (done) closed += 1;
    }
  }
  return closed;
}

async function readIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw err;
  }
}
