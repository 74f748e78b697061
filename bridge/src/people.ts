import { credsFile } from '@ag2net/auth';
import { type HubClient, type HumanClient, type Logger } from '@ag2net/client';
import { ErrorReason, InternalError, NotFoundError, ProtocolError, newId, type HubResponse } from '@ag2net/protocol';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { personSeed, publicKeyOfSeed } from './person-keys.js';

/** Options of `People`. */
export interface PeopleOptions {
  /** The registrant's client: registers and attaches people (secured: over the registrant's credentials). */
  readonly registrant: HubClient;
  /** Whether the deployment is secured (people get their own credentials and connections). */
  readonly secured: boolean;
  readonly secret: Uint8Array;
  /** People's API keys by name: the admission credential of each person's passport. */
  readonly apiKeys: Readonly<Record<string, string>>;
  /** A person's connection unused this long (and with no open stream) is closed, in ms. */
  readonly idleMs: number;
  readonly logger: Logger;
}

interface Held {
  readonly human: Promise<HumanClient>;
  lastUsedMs: number;
  /** Open live streams of this person on this replica: the connection stays while any is open. */
  streams: number;
}

/**
 * One identity connection per person signed in on this replica, each with the person's own credentials: the nkey
 * seed is derived from the bridge secret and the name (`personSeed`), so every replica attaches the same identity
 * with the same key; the JWT comes from the hub's `register` (first time) or `attach`, admitted with the person's
 * API key as the passport's `auth` block. Connections unused for `idleMs` are closed.
 */
export class People {
  readonly #options: PeopleOptions;
  readonly #held = new Map<string, Held>();
  readonly #sweeper: NodeJS.Timeout;
  #dir: Promise<string> | null = null;

  constructor(options: PeopleOptions) {
    this.#options = options;
    this.#sweeper = setInterval(() => void this.#sweep(), Math.max(1000, Math.floor(options.idleMs / 2)));
    this.#sweeper.unref();
  }

  /** People with an identity connection open or being attached on this replica. */
  get size(): number {
    return this.#held.size;
  }

  /** The person's participant, attaching it on first use; marks it used. */
  async person(name: string): Promise<HumanClient> {
    let held = this.#held.get(name);
    if (held === undefined) {
      const human = this.#attach(name);
      held = { human, lastUsedMs: Date.now(), streams: 0 };
      this.#held.set(name, held);
      // A failed attach is not kept (the next request tries again); a participant that ended is dropped.
      human.then(
        (h) => void h.closed().then(() => this.#drop(name, human)),
        () => this.#drop(name, human),
      );
    }
    held.lastUsedMs = Date.now();
    return held.human;
  }

  #drop(name: string, human: Promise<HumanClient>): void {
    if (this.#held.get(name)?.human === human) this.#held.delete(name);
  }

  /** Closes the person's connection on this replica, if open; its next request attaches again (or is refused). */
  async forget(name: string): Promise<void> {
    const held = this.#held.get(name);
    if (held === undefined) return;
    this.#held.delete(name);
    const human = await held.human.catch(() => null);
    await human?.disconnect({ graceMs: 0 }).catch((err: unknown) => {
      this.#options.logger.warn({ err, person: name }, 'closing a person failed');
    });
  }

  /** Keeps the person's connection open while a stream runs; the returned function releases it. */
  hold(name: string): () => void {
    const held = this.#held.get(name);
    if (held === undefined) return () => undefined;
    held.streams += 1;
    return () => {
      held.streams -= 1;
      held.lastUsedMs = Date.now();
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const all = [...this.#held.values()];
    this.#held.clear();
    await Promise.all(all.map(async (h) => (await h.human.catch(() => null))?.disconnect({ graceMs: 0 })));
    if (this.#dir !== null) await rm(await this.#dir, { recursive: true, force: true });
  }

  async #sweep(): Promise<void> {
    const now = Date.now();
    for (const [name, held] of this.#held) {
      if (held.streams > 0 || now - held.lastUsedMs < this.#options.idleMs) continue;
      this.#held.delete(name);
      const human = await held.human.catch(() => null);
      await human?.disconnect({ graceMs: 0 }).catch((err: unknown) => {
        this.#options.logger.warn({ err, person: name }, 'closing an idle person failed');
      });
      this.#options.logger.info({ person: name }, 'idle person connection closed');
    }
  }

  async #attach(name: string): Promise<HumanClient> {
    const { registrant, apiKeys } = this.#options;
    const token = apiKeys[name];
    const auth = token === undefined ? undefined : { scheme: 'api_key', claim: { token } };
    if (!this.#options.secured) {
      // An unsecured hub admits anyone (it has no authenticator, scheme `none`); the bridge checked the key.
      return registrant.attachHuman(name, { passport: { name, kind: 'human' }, autoAckInvites: false });
    }
    const passport = { name, kind: 'human' as const, ...(auth === undefined ? {} : { auth }) };
    const seed = personSeed(this.#options.secret, name);
    const publicKey = publicKeyOfSeed(seed);
    const reply = await this.#credentials({ name, publicKey, auth, passport });
    if (reply.credentials === null) throw new InternalError('the hub issued no credentials on a secured deployment');
    // attachHuman reads the identity's credentials from a file: a private one per person, on this replica only.
    const credsPath = join(await this.#privateDir(), `${name.replace(/[^A-Za-z0-9_-]/g, '_')}-${newId()}.creds`);
    await writeFile(credsPath, credsFile(reply.credentials.jwt, seed), { mode: 0o600 });
    const human = await registrant.attachHuman(name, { credsPath, autoAckInvites: false });
    // The file is this connection's only (renewals rewrite it); a later attach writes its own.
    void human.closed().then(() => rm(credsPath, { force: true }).catch(() => undefined));
    this.#options.logger.info({ person: name, agentId: human.agentId }, 'person attached');
    return human;
  }

  /** A fresh JWT for the person's derived key: `attach` when registered, `register` the first time. */
  async #credentials(request: {
    name: string;
    publicKey: string;
    auth: { scheme: string; claim: { token: string } } | undefined;
    passport: { name: string; kind: 'human' };
  }): Promise<HubResponse<'attach'>> {
    const { registrant } = this.#options;
    const attach = () =>
      registrant.call('attach', {
        name_or_id: request.name,
        public_key: request.publicKey,
        ...(request.auth === undefined ? {} : { auth: request.auth }),
      });
    try {
      return await attach();
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    try {
      return await registrant.call('register', {
        passport: { ...request.passport, agent_id: newId() },
        public_key: request.publicKey,
      });
    } catch (err) {
      // Another replica registered the person in between: the same key, so attach works now.
      if (err instanceof ProtocolError && err.details?.['reason'] === ErrorReason.NameTaken) return attach();
      throw err;
    }
  }

  #privateDir(): Promise<string> {
    this.#dir ??= mkdtemp(join(tmpdir(), 'ag2net-bridge-'));
    return this.#dir;
  }
}
