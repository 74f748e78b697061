import { parseCredsFile } from '@ag2net/auth';
import { IdSchema } from '@ag2net/protocol';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { usageError } from './exit.js';

/** What the command needs from a `.creds` file: its text and whose identity it is. */
export interface LoadedCreds {
  readonly path: string;
  readonly text: string;
  /** The JWT's `name` when it is an agent id (identity credentials are named after their identity); else null. */
  readonly agentId: string | null;
  /** When the JWT expires (its `exp`); `null` when it does not. */
  readonly expiresAt: Date | null;
}

/**
 * The claim of a user JWT the command reads, unverified: the server verifies the JWT when the connection
 * authenticates, so a wrong name here can only make this command's own requests fail.
 */
const UserClaimsSchema = z.looseObject({ name: z.string().optional(), exp: z.number().optional() });

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
    expiresAt: claims.exp === undefined ? null : new Date(claims.exp * 1000),
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
