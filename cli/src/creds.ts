import { parseCredsFile } from '@ag2net/auth';
import { IdSchema } from '@ag2net/protocol';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { usageError } from './exit.js';

/** What the command needs from a `.creds` file: the JWT and seed, whose identity it is, and its reply-inbox prefix. */
export interface LoadedCreds {
  readonly path: string;
  readonly text: string;
  /** The JWT's `name` when it is an agent id (identity credentials are named after their identity); else null. */
  readonly agentId: string | null;
  /** The reply-inbox prefix the JWT lets this user subscribe to; `undefined` for the default `_INBOX`. */
  readonly inboxPrefix: string | undefined;
}

/** The claims of a user JWT the command reads; the server verifies the JWT, the command only routes by it. */
const UserClaimsSchema = z.looseObject({
  name: z.string().optional(),
  nats: z
    .looseObject({
      sub: z.looseObject({ allow: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
});

/** Reads and decodes a `.creds` file; a missing or malformed file is a usage error naming the path. */
export async function loadCreds(path: string): Promise<LoadedCreds> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(
      `cannot read credentials ${path}: ${err instanceof Error ? err.message : String(err)}`,
      'pass the path of a .creds file with --creds or NATS_CREDS (`ag2net auth init` writes admin.creds)',
    );
  }
  let jwt: string;
  try {
    jwt = parseCredsFile(text).jwt;
  } catch {
    throw usageError(`${path} is not a .creds file`, 'a .creds file holds a NATS USER JWT and a USER NKEY SEED block');
  }
  const claims = decodeClaims(jwt);
  const name = IdSchema.safeParse(claims.name);
  return {
    path,
    text,
    agentId: name.success ? name.data : null,
    inboxPrefix: inboxPrefixOf(claims.nats?.sub?.allow ?? []),
  };
}

function decodeClaims(jwt: string): z.infer<typeof UserClaimsSchema> {
  const payload = jwt.split('.')[1] ?? '';
  try {
    const parsed = UserClaimsSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
}

/**
 * The reply prefix a user may subscribe to: with `>` or `_INBOX.>` the default, otherwise the one allowed
 * `<prefix>.>` whose prefix names an inbox (`_INBOX_<id>` for identities). A wrong guess costs nothing: the server
 * refuses the subscription and the command reports access denied.
 */
function inboxPrefixOf(allow: readonly string[]): string | undefined {
  if (allow.includes('>') || allow.includes('_INBOX.>')) return undefined;
  for (const subject of allow) {
    const m = /^([^.*>]*INBOX[^.*>]*)\.>$/.exec(subject);
    if (m?.[1] !== undefined) return m[1];
  }
  return undefined;
}
