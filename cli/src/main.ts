#!/usr/bin/env node
/**
 * The `ag2net` command. From a checkout: `npx ag2net --help` (bin/ag2net.js runs this file through tsx when the
 * package is not built).
 */
import { processIo } from './io.js';
import { runCli } from './program.js';

const io = processIo();
const code = await runCli(process.argv.slice(2), io);
// Follow loops and the NATS connection are closed by now; exit at once rather than wait for stray timers.
process.exit(code);
