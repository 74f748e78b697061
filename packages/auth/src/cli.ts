#!/usr/bin/env node
/**
 * `ag2net-auth`: lays out and maintains the NATS auth of a hub.
 *
 *   ag2net-auth init --dir .data/auth [--prefix ag2] [--host 127.0.0.1] [--port 4222] [--store-dir DIR] [--force]
 *   ag2net-auth revoke --dir .data/auth --user U…
 *
 * From the repository: `node --conditions=@ag2net/source --import tsx packages/auth/src/cli.ts init --dir .data/auth`.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { AuthFile } from './files.js';
import { authInit } from './init.js';
import { revokeUser } from './revoke.js';

const USAGE = [
  'usage:',
  '  ag2net-auth init --dir DIR [--prefix P] [--host H] [--port N] [--store-dir DIR] [--force]',
  '  ag2net-auth revoke --dir DIR --user PUBLIC_KEY',
].join('\n');

/** Runs the command line `argv` (without node and the script); returns the exit code. */
export async function runCli(argv: readonly string[], out: (line: string) => void): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
      dir: { type: 'string' },
      prefix: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'store-dir': { type: 'string' },
      force: { type: 'boolean' },
      user: { type: 'string' },
    },
  });
  if (values.dir === undefined) {
    out(USAGE);
    return 2;
  }
  switch (command) {
    case 'init': {
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
        out(`--port must be a port number, got ${values.port}`);
        return 2;
      }
      const auth = await authInit({
        dir: values.dir,
        ...(values.prefix === undefined ? {} : { prefix: values.prefix }),
        ...(values.host === undefined ? {} : { host: values.host }),
        ...(port === undefined ? {} : { port }),
        ...(values['store-dir'] === undefined ? {} : { storeDir: values['store-dir'] }),
        force: values.force ?? false,
      });
      out(`auth for prefix ${auth.manifest.prefix} in ${auth.dir}`);
      out(`  operator     ${auth.manifest.operator.public_key}`);
      out(`  data account      ${auth.manifest.data_account.public_key}`);
      out(`  identity account  ${auth.manifest.identity_account.public_key}`);
      out(`  nats-server       nats-server -c ${auth.path(AuthFile.serverConf)}`);
      out(`  hub-service       ${auth.path(AuthFile.hubServiceCreds)}`);
      out(`  admin             ${auth.path(AuthFile.adminCreds)}`);
      out(`  registrant        ${auth.path(AuthFile.registrantCreds)}`);
      out(`  operator caller   ${auth.path(AuthFile.operatorCallerCreds)}`);
      return 0;
    }
    case 'revoke': {
      if (values.user === undefined) {
        out(USAGE);
        return 2;
      }
      const revoked = await revokeUser({ dir: values.dir, userPublicKey: values.user });
      out(`revoked ${values.user}; restart nats-server, or push the account JWT with the system user`);
      out(`  account ${revoked.accountPublicKey}`);
      return 0;
    }
    default:
      out(USAGE);
      return 2;
  }
}

// Run only as a script, not when imported (tests import runCli).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runCli(process.argv.slice(2), (line) => void process.stdout.write(`${line}\n`)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
