import { IdentityCredentialsError, type HumanClient } from '@ag2net/client';
import { ErrorCode, HubError, type PassportInput } from '@ag2net/protocol';
import { mkdir } from 'node:fs/promises';
import type { CommandEnv } from './env.js';
import { CliError, usageError } from './exit.js';
import { readApiKeysFile } from './keys-file.js';
import {
  OtherKeyError,
  heldKey,
  obtainPersonCredentials,
  retireIdentity,
  stackPersonSeed,
  type HeldKey,
} from './person-key.js';
import { identityCredsDir, type Session, type Target } from './session.js';
import { API_KEYS_FILE, BRIDGE_SECRET_FILE, identityCredsFile, isFile } from './stack.js';

/**
 * Where a person's credentials are kept on a secured deployment: `--creds-dir` (`AG2NET_CREDS_DIR`), else where
 * `npm start` keeps identities' credentials. The hub issues them at the first chat, the client writes them (0600) and
 * renews them, and the next chat attaches with them.
 */
export async function personCredsPath(target: Target, me: string): Promise<string> {
  const dir = await identityCredsDir(target);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return identityCredsFile(dir, me);
}

/** Who chats, as the command found them. */
export interface Person {
  readonly me: string;
  readonly apiKey: string | undefined;
  /** Where the person's credentials are kept on a secured deployment; `undefined` on one without auth. */
  readonly credsPath: string | undefined;
  /** `--rekey`. */
  readonly rekey: boolean;
}

/**
 * Attaches the person, or registers it when the name is new. Beside the stack's bridge secret, with credentials the
 * hub issues for the key the console derives (`obtainPersonCredentials`), unless the person's `.creds` holds a key of
 * its own: that file wins (a note says the console cannot sign the person in, and how `--rekey` fixes it), and with
 * `--rekey` its identity is retired first. Without the secret, the client's own way: the person's `.creds`, else a new
 * key.
 */
export async function attachPerson(env: CommandEnv, session: Session, person: Person): Promise<HumanClient> {
  const { target, hub } = session;
  const { me, apiKey, credsPath } = person;
  const passport: PassportInput = {
    name: me,
    kind: 'human',
    ...(apiKey === undefined ? {} : { auth: { scheme: 'api_key', claim: { token: apiKey } } }),
  };
  const seed = credsPath === undefined ? null : await stackPersonSeed(target.stack, me);
  if (person.rekey && (credsPath === undefined || seed === null)) {
    throw usageError(
      `--rekey gives ${me} the key the console derives, and there is no ${target.stack.shown(target.stack.auth(BRIDGE_SECRET_FILE))}`,
      'run it where npm start ran (its .data/), or pass --auth-dir <its .data/auth>',
    );
  }
  let held: HeldKey = credsPath === undefined || seed === null ? 'none' : await heldKey(credsPath, seed);
  try {
    if (credsPath !== undefined && seed !== null) {
      if (held === 'other' && person.rekey) {
        const closed = await retireIdentity(hub, { name: me, apiKey, credsPath });
        env.out.progress(`retired the identity of ${me}'s old key (${closed} open channel(s) closed)`);
        held = 'none';
      }
      if (held !== 'other') await obtainPersonCredentials({ hub, name: me, apiKey, seed, credsPath });
    }
    const human = await hub.attachHuman(me, { passport, ...(credsPath === undefined ? {} : { credsPath }) });
    if (held === 'other' && credsPath !== undefined) {
      env.out.note(
        `the console cannot sign ${me} in: ${target.stack.shown(credsPath)} holds a key of its own, not the console's`,
        `\`ag2net chat <agent> --as ${me} --rekey\` registers ${me} again with the console's key ` +
          `(the channels of ${me} so far stay with the old identity)`,
      );
    }
    return human;
  } catch (err) {
    const heldFile = credsPath !== undefined && (await isFile(credsPath));
    throw admissionRefusal(err, { target, me, credsPath, held: heldFile, keyFound: apiKey !== undefined });
  }
}

/** The person's key in the stack's `api-keys.json`, when that file is there and readable and has one. */
export async function stackApiKey(target: Target, me: string): Promise<string | undefined> {
  const keys = await readApiKeysFile(target.stack.auth(API_KEYS_FILE)).catch(() => null);
  return keys?.[me];
}

/** A refusal to attach or register the person, with the flags that fix it (never the SDK's option names). */
function admissionRefusal(
  err: unknown,
  ctx: {
    readonly target: Target;
    readonly me: string;
    readonly credsPath: string | undefined;
    /** Whether a file is at `credsPath`. */
    readonly held: boolean;
    readonly keyFound: boolean;
  },
): unknown {
  const { target, me } = ctx;
  if (err instanceof OtherKeyError) {
    const where = ctx.credsPath === undefined ? 'here' : `at ${target.stack.shown(ctx.credsPath)}`;
    return new CliError(
      `${me} is registered with a key of its own, not the one the console derives for ${me}, and that key's ` +
        `credentials are not ${where}`,
      ErrorCode.AccessDenied,
      {
        hint:
          `put ${me}.creds from before there (or pass --creds-dir <its directory>) and chat again, adding --rekey to ` +
          `register ${me} with the console's key; or admit another name: \`ag2net people add <name>\``,
        cause: err,
      },
    );
  }
  if (err instanceof IdentityCredentialsError && ctx.held && ctx.credsPath !== undefined) {
    // A file is there, and it is not the person's: another identity's, or no identity's at all.
    return new CliError(err.message, ErrorCode.AccessDenied, {
      hint: `move ${target.stack.shown(ctx.credsPath)} away, or pass --creds-dir <the directory of ${me}'s own .creds>`,
      cause: err,
    });
  }
  if (err instanceof IdentityCredentialsError) {
    const where = ctx.credsPath === undefined ? 'here' : `at ${target.stack.shown(ctx.credsPath)}`;
    return new CliError(
      `${me} is registered, and chatting as ${me} needs its credentials, which are not ${where}`,
      ErrorCode.AccessDenied,
      {
        hint: `pass --creds-dir <the directory of ${me}.creds>, or --as <another name>`,
        cause: err,
      },
    );
  }
  if (err instanceof HubError && err.code === ErrorCode.AuthFailed) {
    return new CliError(`${err.code}: ${err.message}`, ErrorCode.AccessDenied, {
      hint: ctx.keyFound
        ? `the hub refused the admission key of ${me}: pass the right one with --api-key`
        : `${me} has no admission key: \`ag2net people add ${me}\` gives it one (then chat again), or pass --api-key`,
      cause: err,
    });
  }
  return err;
}
