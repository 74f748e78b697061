import {
  AuthFile,
  authInit,
  createIdentityKeys,
  credsFile,
  issueIdentityCredentials,
  pushAccountJwt,
  readManifest,
  revokeUser,
  type AuthManifest,
} from '@ag2net/auth';
import { ErrorCode, hubNames } from '@ag2net/protocol';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import type { Command } from 'commander';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { IntFlag, action, needsSubcommand, type CommandEnv } from '../env.js';
import { CliError, usageError } from '../exit.js';
import type { CliIo } from '../io.js';
import { DEFAULT_AUTH_DIR } from '../stack.js';

const InitOptions = z.object({
  dir: z.string().min(1).optional(),
  host: z.string().min(1).optional(),
  port: z.coerce.number().int().min(0).max(65_535).optional(),
  storeDir: z.string().min(1).optional(),
  force: z.boolean().default(false),
});

const IssueOptions = z.object({
  dir: z.string().min(1).optional(),
  agent: z.string().min(1),
  publicKey: z
    .string()
    .regex(/^U[A-Z2-7]{55}$/, 'not an nkey user public key (U…)')
    .optional(),
  ttl: IntFlag.optional(),
  out: z.string().min(1).optional(),
});

const RevokeOptions = z.object({
  dir: z.string().min(1).optional(),
  agent: z.string().min(1).optional(),
  user: z
    .string()
    .regex(/^U[A-Z2-7]{55}$/, 'not an nkey user public key (U…)')
    .optional(),
  push: z.boolean().default(true),
});

const ReadmitOptions = z.object({ agent: z.string().min(1) });

/**
 * `ag2net auth init` and `ag2net creds issue|revoke`: the operator's side of `@ag2net/auth` (the same functions as
 * the `ag2net-auth` command), on an auth directory (`--dir`, default `.data/auth`).
 */
export function adminCommands(program: Command, io: CliIo): void {
  needsSubcommand(
    program.command('auth').description('NATS auth of a hub'),
    'use `ag2net auth init` to lay out an auth directory',
  )
    .command('init')
    .description('create (or re-sign) the operator, accounts, service users and nats-server config under --dir')
    .option('--dir <dir>', `the auth directory (default --auth-dir, or ${DEFAULT_AUTH_DIR})`)
    .option('--host <host>', 'server.conf listen host (default 127.0.0.1)')
    .option('--port <port>', 'server.conf listen port (default 4222)')
    .option('--store-dir <dir>', 'server.conf JetStream store (default <dir>/../jetstream)')
    .option('--force', 'replace every existing key (every credential changes)')
    .action(
      action(io, InitOptions, async (env, opts) => {
        const auth = await authInit({
          dir: await authDirOf(env, opts.dir),
          prefix: env.prefix(),
          force: opts.force,
          ...(opts.host === undefined ? {} : { host: opts.host }),
          ...(opts.port === undefined ? {} : { port: opts.port }),
          ...(opts.storeDir === undefined ? {} : { storeDir: opts.storeDir }),
        });
        const files = {
          server_conf: auth.path(AuthFile.serverConf),
          hub_service_creds: auth.path(AuthFile.hubServiceCreds),
          admin_creds: auth.path(AuthFile.adminCreds),
          registrant_creds: auth.path(AuthFile.registrantCreds),
          operator_caller_creds: auth.path(AuthFile.operatorCallerCreds),
          system_user_creds: auth.path(AuthFile.systemUserCreds),
        };
        if (env.out.json) return env.out.data({ dir: auth.dir, prefix: auth.manifest.prefix, files });
        const o = env.out;
        o.line(`auth for prefix ${o.paint('accent', auth.manifest.prefix)} in ${auth.dir}`);
        o.fields([
          ['operator', auth.manifest.operator.public_key],
          ['data account', auth.manifest.data_account.public_key],
          ['identity account', auth.manifest.identity_account.public_key],
          ['nats-server', `nats-server -c ${files.server_conf}`],
          ['hub-service', files.hub_service_creds],
          ['admin', `${files.admin_creds}  (ag2net --operator --creds ${files.admin_creds} …)`],
          ['registrant', files.registrant_creds],
          ['operator caller', `${files.operator_caller_creds}  (the bridge's)`],
        ]);
      }),
    );

  const creds = needsSubcommand(
    program.command('creds').description("identity credentials (operators; needs the auth directory's keys)"),
    'use `ag2net creds issue --agent <name>`, `ag2net creds revoke --agent <name>` or `ag2net creds readmit --agent <name>`',
  );
  creds
    .command('issue')
    .description("issue an identity's user JWT; without --public-key a new key pair and a complete .creds file")
    .requiredOption('--agent <agent>', 'the registered identity (name or id)')
    .option('--dir <dir>', `the auth directory (default --auth-dir, or ${DEFAULT_AUTH_DIR})`)
    .option('--public-key <key>', "the identity's nkey public key (U…): prints the JWT only, the seed stays with it")
    .option('--ttl <seconds>', 'lifetime in seconds (default 3600, at most 86400)')
    .option('--out <file>', 'write the .creds file here (mode 0600) instead of standard output')
    .action(
      action(io, IssueOptions, async (env, opts) => {
        const { manifest, signingSeed } = await readAuthDir(await authDirOf(env, opts.dir));
        const session = await env.session();
        const agentId = await session.agentId(opts.agent);
        const keys = opts.publicKey === undefined ? createIdentityKeys() : null;
        const issued = await issueIdentityCredentials({
          accountPublicKey: manifest.identity_account.public_key,
          accountSigningSeed: signingSeed,
          identityPublicKey: opts.publicKey ?? keys?.publicKey ?? '',
          agentId,
          names: hubNames(manifest.prefix),
          ...(opts.ttl === undefined ? {} : { ttlSeconds: opts.ttl }),
        });
        const text = keys === null ? null : credsFile(issued.jwt, keys.seed);
        if (opts.out !== undefined) await writePrivate(opts.out, text ?? `${issued.jwt}\n`);
        const expiresAt = new Date(issued.expiresAt * 1000).toISOString();
        if (env.out.json) {
          return env.out.data({
            agent_id: agentId,
            public_key: opts.publicKey ?? keys?.publicKey,
            expires_at: expiresAt,
            jwt: issued.jwt,
            ...(opts.out === undefined ? { creds: text } : { path: resolve(opts.out) }),
          });
        }
        if (opts.out === undefined) env.io.out(text ?? `${issued.jwt}\n`);
        else env.out.line(`wrote ${resolve(opts.out)} for ${opts.agent} (${agentId}), valid until ${expiresAt}`);
      }),
    );
  creds
    .command('revoke')
    .description(
      'revoke an identity (--agent) until it is re-admitted, or a service user (--user): the hub refuses it, and the ' +
        'account is re-signed and pushed so that the running server closes its connections',
    )
    .option('--agent <agent>', 'the identity to revoke (name or id); needs --operator')
    .option('--user <key>', "a service user's nkey public key (U…): the registrant, the operator caller, the admin")
    .option('--dir <dir>', `the auth directory (default --auth-dir, or ${DEFAULT_AUTH_DIR})`)
    .option('--no-push', 'only rewrite the files (a restarted server refuses the user)')
    .action(
      action(io, RevokeOptions, async (env, opts) => {
        const dir = await authDirOf(env, opts.dir);
        await readAuthDir(dir);
        if ((opts.agent === undefined) === (opts.user === undefined)) {
          throw usageError('name what to revoke', 'pass either --agent <name|id> or --user <U…>');
        }
        let user = opts.user;
        let atSeconds: number | undefined;
        let identity: { agent_id: string; name: string } | null = null;
        if (opts.agent !== undefined) {
          const session = await env.session();
          session.requireOperator('revoking an identity');
          const revoked = await session.hub.call('revokeIdentity', { name_or_id: opts.agent });
          identity = { agent_id: revoked.agent_id, name: revoked.name };
          // Dated as the hub dated it: credentials it issues after a re-admission postdate the account's revocation.
          atSeconds = revoked.revoked_at === null ? undefined : Math.floor(Date.parse(revoked.revoked_at) / 1000);
          user = revoked.public_key ?? undefined;
        }
        const revoked =
          user === undefined
            ? null
            : await revokeUser({
                dir,
                userPublicKey: user,
                ...(atSeconds === undefined ? {} : { atSeconds }),
              });
        if (revoked !== null && opts.push) await pushToServer(env, dir, revoked);
        if (env.out.json) {
          return env.out.data({
            ...(identity === null ? {} : identity),
            user: user ?? null,
            account: revoked?.accountPublicKey ?? null,
            pushed: revoked !== null && opts.push,
          });
        }
        env.out.line(`revoked ${identity === null ? opts.user : `${identity.name} (${identity.agent_id})`}`);
        if (identity !== null) {
          env.out.line(
            `the hub refuses its calls and its admission until \`ag2net --operator creds readmit --agent ${identity.name}\``,
          );
        }
        if (revoked === null) return;
        env.out.line(
          opts.push
            ? 'the running server closed its connections and refuses its credentials from now on'
            : 'restart nats-server (or run again without --no-push) for the server to refuse its credentials',
        );
      }),
    );
  creds
    .command('readmit')
    .description('re-admit a revoked identity: its next attach gets credentials dated after the revocation')
    .requiredOption('--agent <agent>', 'the identity (name or id); needs --operator')
    .action(
      action(io, ReadmitOptions, async (env, opts) => {
        const session = await env.session();
        session.requireOperator('re-admitting an identity');
        const readmitted = await session.hub.call('readmitIdentity', { name_or_id: opts.agent });
        if (env.out.json) return env.out.data(readmitted);
        env.out.line(`re-admitted ${readmitted.name} (${readmitted.agent_id})`);
        env.out.line('it attaches again with its admission credential and its own key');
      }),
    );
}

/** `--dir`, else the global `--auth-dir` (`AG2NET_AUTH_DIR`, `.data/auth`), from the working directory. */
async function authDirOf(env: CommandEnv, dir: string | undefined): Promise<string> {
  const { stack } = await env.target();
  return dir === undefined ? stack.authDir : resolve(stack.cwd, dir);
}

/** The manifest and the identity account's signing seed; a directory without them names `auth init`. */
async function readAuthDir(dir: string): Promise<{ manifest: AuthManifest; signingSeed: string }> {
  const manifest = await readManifest(join(dir, AuthFile.manifest));
  if (manifest === null) {
    throw usageError(`${dir} holds no auth manifest`, `run \`ag2net auth init --dir ${dir}\` first, or pass --dir`);
  }
  let signingSeed: string;
  try {
    signingSeed = (await readFile(join(dir, AuthFile.identityAccountSigningSeed), 'utf8')).trim();
  } catch {
    throw new CliError(`cannot read ${join(dir, AuthFile.identityAccountSigningSeed)}`, ErrorCode.AccessDenied, {
      hint: 'issuing needs the identity account signing key: run as the user that owns the auth directory',
    });
  }
  return { manifest, signingSeed };
}

/** Hands the re-signed account JWT to the running server over the system account (`system-user.creds`). */
async function pushToServer(
  env: CommandEnv,
  dir: string,
  revoked: { accountPublicKey: string; accountJwt: string },
): Promise<void> {
  const target = await env.target();
  const creds = await readFile(join(dir, AuthFile.systemUserCreds));
  const nc = await connect({
    servers: target.servers,
    authenticator: credsAuthenticator(creds),
    timeout: target.timeoutMs,
  });
  try {
    await pushAccountJwt(nc, revoked, { timeout: target.timeoutMs });
  } finally {
    await nc.close();
  }
}

async function writePrivate(path: string, text: string): Promise<void> {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
}
