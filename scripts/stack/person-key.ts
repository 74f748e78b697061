import { credsFile, keysFromSeed, parseCredsFile } from '@ag2net/auth';
import type { HubClient } from '@ag2net/client';
import { ErrorReason, ProtocolError, newId } from '@ag2net/protocol';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { closeOpenChannels } from './open-channels.js';

/** What `ensurePersonKey` did. */
export type PersonKeyOutcome = 'kept' | 'registered' | 'attached' | 'replaced';

/** Options of `ensurePersonKey`. */
export interface PersonKeyOptions {
  /** Connected as the registrant. */
  readonly hub: HubClient;
  readonly name: string;
  /** The person's API key: the admission credential of its passport. */
  readonly apiKey: string;
  /** The nkey seed the person must hold: the one the bridge derives from its secret and the name. */
  readonly seed: string;
  /** The person's `.creds` file: written (0600) with the seed and a JWT the hub issued for it. */
  readonly credsPath: string;
}

/**
 * Makes the person's identity the one whose key is `seed`, so the demo and the bridge act as one person: with no
 * credentials file yet, registers the person with that key (`register` with `public_key`, the API key in the
 * passport's `auth` block), or, when the name is registered with that key already (the bridge registered it first),
 * asks `attach` for a JWT; either way the `.creds` file is written. A file holding another key (a run from before the
 * person's key was derived) names an identity the bridge cannot attach: it is unregistered as itself and the person
 * registered again with the derived key, after closing the channels it left open (`closed` counts them: an agent would
 * otherwise wait for an identity that is gone). Its channels stay in the hub's history, readable by the operator.
 */
export async function ensurePersonKey(
  options: PersonKeyOptions,
): Promise<{ readonly outcome: PersonKeyOutcome; readonly closed: number }> {
  const { hub, name, credsPath } = options;
  const publicKey = keysFromSeed(options.seed).publicKey;
  const held = await readFile(credsPath, 'utf8').catch((err: unknown) => {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') return null;
    throw err;
  });
  let replaced = false;
  let closed = 0;
  if (held !== null) {
    if (keysFromSeed(parseCredsFile(held).seed).publicKey === publicKey) return { outcome: 'kept', closed: 0 };
    // The identity of the old key, as itself; a name the hub no longer knows is registered anew (and unregistered).
    const old = await hub.attachHuman(name, { credsPath, passport: passportOf(name, options.apiKey) });
    closed = await closeOpenChannels(old);
    await old.unregister();
    await rm(credsPath, { force: true });
    replaced = true;
  }
  const auth = { scheme: 'api_key', claim: { token: options.apiKey } };
  let outcome: PersonKeyOutcome = replaced ? 'replaced' : 'registered';
  let reply;
  try {
    reply = await hub.call('register', {
      passport: { ...passportOf(name, options.apiKey), agent_id: newId() },
      public_key: publicKey,
    });
  } catch (err) {
    if (!(err instanceof ProtocolError) || err.details?.['reason'] !== ErrorReason.NameTaken) throw err;
    // Registered already: by the bridge with this very key, or the hub refuses `attach` for another one.
    reply = await hub.call('attach', { name_or_id: name, public_key: publicKey, auth });
    outcome = 'attached';
  }
  if (reply.credentials === null) throw new Error(`the hub issued no credentials to ${name} on a secured stack`);
  await mkdir(dirname(credsPath), { recursive: true, mode: 0o700 });
  await writeFile(credsPath, credsFile(reply.credentials.jwt, options.seed), { mode: 0o600 });
  await chmod(credsPath, 0o600);
  return { outcome, closed };
}

function passportOf(name: string, apiKey: string) {
  return { name, kind: 'human' as const, auth: { scheme: 'api_key', claim: { token: apiKey } } };
}
