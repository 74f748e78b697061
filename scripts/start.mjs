// The local stack (nats-server, hub-service, agent-runner and the demo) arrives with the client and runner work.
// Until then this says so instead of pretending.
process.stdout.write(
  [
    'ag2net: the local stack is not built yet.',
    'What exists today: the wire protocol and the four channel protocols, with their tests (npm test).',
    'See README.md, section Status.',
    '',
  ].join('\n'),
);
