import { credsAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { readFileSync } from 'node:fs';

/**
 * How the bench's connections authenticate: with `NATS_CREDS` (the path of a `.creds` file) when it is set, as when
 * `NATS_URL` names a secured server; otherwise without credentials. The user needs full rights in its account: the
 * bench creates streams under fresh prefixes, runs a hub and appends to raw baselines. Read at each call, so that the
 * bench host (a child process) authenticates as the driver does.
 */
export function benchAuth(env: NodeJS.ProcessEnv = process.env): Pick<ConnectionOptions, 'authenticator'> {
  const path = env['NATS_CREDS'];
  if (path === undefined || path === '') return {};
  return { authenticator: credsAuthenticator(readFileSync(path)) };
}
