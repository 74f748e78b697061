#!/usr/bin/env bash
# The published packages, used as another repository would use them: packs every publishable workspace into a
# temporary directory, installs the tarballs into a copy of examples/consumer (third-party dependencies from the
# registry through the npm cache), typechecks the consumer with tsc against the packed .d.ts, runs it against a
# fresh nats-server on a random port and checks that it printed the agent's answer and the hub's role as the
# `ag2net` command's library entry reported it, then runs `--help` of the three commands from the installed
# tarballs. Needs `npm run build` first and nats-server on PATH. About a minute warm.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PACKAGES=(packages/protocol packages/adapters packages/hub packages/client packages/agent packages/auth packages/telemetry hub-service agent-runner cli)
EXPECTED_ANSWER='answer: A log is an append-only sequence of records.'
EXPECTED_HEALTH='ag2net health: active'

log() { printf '\n== pack-consumer: %s (at %d s)\n' "$*" "$SECONDS"; }
fail() {
  printf 'pack-consumer: %s\n' "$*" >&2
  exit 1
}

for dir in "${PACKAGES[@]}"; do
  [ -f "$dir/dist/index.js" ] || [ -f "$dir/dist/main.js" ] || fail "$dir/dist is missing: run npm run build first"
done
command -v nats-server >/dev/null 2>&1 || fail "nats-server is not on PATH"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ag2net-pack.XXXXXX")
NATS_PID=
cleanup() {
  if [ -n "$NATS_PID" ]; then kill "$NATS_PID" 2>/dev/null || true; wait "$NATS_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

log "npm pack (${#PACKAGES[@]} packages)"
mkdir -p "$WORK/tarballs"
# The build is already done, so prepack (tsc -b) is skipped.
npm pack --ignore-scripts --silent --pack-destination "$WORK/tarballs" "${PACKAGES[@]/#/./}" >/dev/null
mapfile -t TARBALLS < <(ls "$WORK"/tarballs/*.tgz)
[ "${#TARBALLS[@]}" -eq "${#PACKAGES[@]}" ] || fail "expected ${#PACKAGES[@]} tarballs, got ${#TARBALLS[@]}"

log "tarball contents"
for tgz in "${TARBALLS[@]}"; do
  listing=$(tar -tzf "$tgz")
  name=$(basename "$tgz")
  grep -qx 'package/README.md' <<<"$listing" || fail "$name has no README.md"
  grep -qE '^package/dist/.+\.js$' <<<"$listing" || fail "$name has no built JavaScript"
  grep -qE '^package/dist/.+\.d\.ts$' <<<"$listing" || fail "$name has no declarations"
  grep -qE '^package/dist/.+\.js\.map$' <<<"$listing" || fail "$name has no source maps"
  if grep -E '(\.test\.|/test/|\.tsbuildinfo$)' <<<"$listing"; then fail "$name ships test files (above)"; fi
  tar -xzf "$tgz" -O package/package.json | node -e '
    const pkg = JSON.parse(require("fs").readFileSync(0, "utf8"));
    const files = new Set(process.argv[1].split("\n").map((f) => f.replace(/^package\//, "")));
    const problems = [];
    if (pkg.license !== "Apache-2.0") problems.push(`license is ${pkg.license}`);
    if (pkg.private) problems.push("private");
    // Every default/types export target and every bin must be a file inside the tarball: a consumer never
    // sets the workspace-only @ag2net/source condition.
    const targets = [];
    for (const entry of Object.values(pkg.exports ?? {})) {
      if (typeof entry === "string") targets.push(entry);
      else for (const [cond, t] of Object.entries(entry)) if (cond !== "@ag2net/source") targets.push(t);
    }
    targets.push(...Object.values(pkg.bin ?? {}));
    for (const t of targets) if (!files.has(t.replace(/^\.\//, ""))) problems.push(`${t} is not in the tarball`);
    if (problems.length > 0) { console.error(`${pkg.name}: ${problems.join("; ")}`); process.exit(1); }
  ' "$listing" || fail "$name: bad package.json"
  printf '  %-40s %4d files\n' "$name" "$(wc -l <<<"$listing")"
done

log "install into a fresh consumer project"
cp -R examples/consumer "$WORK/consumer"
rm -rf "$WORK/consumer/node_modules" "$WORK/consumer/dist"
cd "$WORK/consumer"
# The tarballs replace the @ag2net/* versions the example names; everything else comes from the registry via
# the local npm cache. All tarballs install at once, so one package's dependency on another resolves to its
# tarball, never to a registry copy.
npm install --no-audit --no-fund --prefer-offline --loglevel=error "${TARBALLS[@]}"
for dep in protocol adapters hub client agent auth telemetry hub-service agent-runner; do
  resolved=$(node -p "require('./package-lock.json').packages['node_modules/@ag2net/$dep']?.resolved ?? ''")
  case "$resolved" in
    file:*) ;;
    *) fail "@ag2net/$dep did not install from its tarball (resolved: ${resolved:-nothing})" ;;
  esac
done
resolved=$(node -p "require('./package-lock.json').packages['node_modules/ag2net']?.resolved ?? ''")
case "$resolved" in
  file:*) ;;
  *) fail "ag2net did not install from its tarball (resolved: ${resolved:-nothing})" ;;
esac
[ ! -e node_modules/@ag2net/test-support ] || fail "@ag2net/test-support must not be installed"

log "typecheck the consumer against the packed declarations (tsc)"
npx --no-install tsc -p tsconfig.json

log "run the consumer against a fresh nats-server"
mkdir -p "$WORK/nats"
nats-server -js -a 127.0.0.1 -p -1 --ports_file_dir "$WORK/nats" -sd "$WORK/nats/store" >"$WORK/nats/log" 2>&1 &
NATS_PID=$!
# The ports file may be half-written when first seen: read it again until it parses.
NATS_URL=
for _ in $(seq 1 150); do
  NATS_URL=$(node -e '
    const fs = require("fs");
    const dir = process.argv[1];
    const file = fs.readdirSync(dir).find((f) => f.endsWith(".ports"));
    try { console.log(JSON.parse(fs.readFileSync(`${dir}/${file}`, "utf8")).nats[0]); } catch {}
  ' "$WORK/nats")
  [ -n "$NATS_URL" ] && break
  kill -0 "$NATS_PID" 2>/dev/null || fail "nats-server exited: $(cat "$WORK/nats/log")"
  sleep 0.1
done
[ -n "$NATS_URL" ] || fail "nats-server wrote no ports file"
output=$(timeout 90 node dist/main.js "$NATS_URL") || fail "the consumer failed; it printed: $output"
printf '%s\n' "$output"
grep -qxF "$EXPECTED_ANSWER" <<<"$output" || fail "expected the line: $EXPECTED_ANSWER"
grep -qxF "$EXPECTED_HEALTH" <<<"$output" || fail "expected the line: $EXPECTED_HEALTH"

log "commands from the installed tarballs"
npx --no-install ag2net-hub --help >/dev/null || fail "ag2net-hub --help failed"
npx --no-install ag2net-runner --help >/dev/null || fail "ag2net-runner --help failed"
npx --no-install ag2net --help >/dev/null || fail "ag2net --help failed"
echo "ag2net-hub --help, ag2net-runner --help and ag2net --help exit 0"

log "ok"
