/**
 * `node --import tsx scripts/nats/install-current.ts DIR`: installs the current nats-server release into DIR (see
 * `currentNatsServer`) and prints its path; exits 1 with the reason on stderr when it cannot.
 */
import { currentNatsServer } from './current-server.js';

const dir = process.argv[2];
if (dir === undefined || dir === '') {
  process.stderr.write('usage: install-current.ts DIR\n');
  process.exit(2);
}
try {
  process.stdout.write(`${await currentNatsServer(dir)}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
