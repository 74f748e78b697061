#!/usr/bin/env bash
# The published packages, used as another repository would use them: packs every publishable workspace into a
# temporary directory, installs the tarballs into a copy of examples/consumer (third-party dependencies from the
# registry through the npm cache), typechecks the consumer with tsc against the packed .d.ts, runs it against a
# fresh nats-server on a random port and checks that it printed the agent's answer and the hub's role as the
# `ag2net` command's library entry reported it, then runs `--help` of the three commands from the installed
# tarballs. Then README.md's SDK example, taken from the README as it stands: installed into a project of its own
# the way README's "Using the packages from another project" says (no EBADENGINE warning allowed), compiled with that
# project's TypeScript and run twice with plain node against a secured stack laid out like `npm start`'s (the packed
# `authInit`, nats-server with its server.conf, hub-service from the packed `ag2net-hub` with API keys for `scholar`
# and `me`). Needs `npm run build` first and nats-server on PATH. About a minute and a half warm.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PACKAGES=(packages/protocol packages/adapters packages/hub packages/client packages/agent packages/auth packages/telemetry hub-service agent-runner cli)
EXPECTED_ANSWER='answer: A log is an append-only sequence of records.'
EXPECTED_HEALTH='ag2net health: active'
# What README's SDK example prints with the scripted model, as test/start.test.ts expects it too.
EXPECTED_SDK='scholar: A log is append-only.'
# The packages README's SDK example imports, and the ones they depend on.
SDK_PACKAGES=(protocol adapters client agent)

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
# The processes this script started, stopped in reverse order on exit.
PIDS=()
cleanup() {
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill "${PIDS[i]}" 2>/dev/null || true
    wait "${PIDS[i]}" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# Starts nats-server with the given arguments plus a random port whose ports file goes to $1; sets NATS_URL.
start_nats() {
  local dir=$1
  shift
  mkdir -p "$dir"
  nats-server "$@" -p -1 --ports_file_dir "$dir" >"$dir/log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  # The ports file may be half-written when first seen: read it again until it parses.
  NATS_URL=
  for _ in $(seq 1 150); do
    NATS_URL=$(node -e '
      const fs = require("fs");
      const dir = process.argv[1];
      const file = fs.readdirSync(dir).find((f) => f.endsWith(".ports"));
      try { console.log(JSON.parse(fs.readFileSync(`${dir}/${file}`, "utf8")).nats[0]); } catch {}
    ' "$dir")
    [ -n "$NATS_URL" ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "nats-server exited: $(cat "$dir/log")"
    sleep 0.1
  done
  fail "nats-server wrote no ports file"
}

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
start_nats "$WORK/nats" -js -a 127.0.0.1 -sd "$WORK/nats/store"
output=$(timeout 90 node dist/main.js "$NATS_URL") || fail "the consumer failed; it printed: $output"
printf '%s\n' "$output"
grep -qxF "$EXPECTED_ANSWER" <<<"$output" || fail "expected the line: $EXPECTED_ANSWER"
grep -qxF "$EXPECTED_HEALTH" <<<"$output" || fail "expected the line: $EXPECTED_HEALTH"

log "commands from the installed tarballs"
npx --no-install ag2net-hub --help >/dev/null || fail "ag2net-hub --help failed"
npx --no-install ag2net-runner --help >/dev/null || fail "ag2net-runner --help failed"
npx --no-install ag2net --help >/dev/null || fail "ag2net --help failed"
echo "ag2net-hub --help, ag2net-runner --help and ag2net --help exit 0"

log "README's SDK example in a project of its own"
SDK_DIR="$WORK/readme-sdk"
mkdir -p "$SDK_DIR"
# The first ```ts block of README's "Using the SDK" section, as it stands: the example a reader copies.
node -e '
  const fs = require("fs");
  const readme = fs.readFileSync(process.argv[1], "utf8");
  const start = readme.indexOf("\n## Using the SDK\n");
  if (start < 0) throw new Error("README.md has no \"## Using the SDK\" section");
  const end = readme.indexOf("\n## ", start + 1);
  const block = /^```ts\n([\s\S]*?)^```$/m.exec(readme.slice(start, end < 0 ? undefined : end));
  if (block === null) throw new Error("the \"Using the SDK\" section of README.md has no ```ts block");
  fs.writeFileSync(process.argv[2], block[1]);
' "$ROOT/README.md" "$SDK_DIR/sdk.ts"
# An ES module project set up as README's "Using the packages from another project" says, with TypeScript to
# compile the example (the repository's versions, so that they come from the npm cache).
cat >"$SDK_DIR/package.json" <<'JSON'
{
  "name": "readme-sdk",
  "private": true,
  "type": "module",
  "overrides": { "@nats-io/nuid": "2.0.3" }
}
JSON
# The compiler options README names, and strict.
cat >"$SDK_DIR/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "module": "nodenext",
    "target": "es2023",
    "lib": ["es2023", "esnext.disposable"],
    "types": ["node"],
    "skipLibCheck": true,
    "strict": true
  },
  "files": ["sdk.ts"]
}
JSON
SDK_TARBALLS=()
for name in "${SDK_PACKAGES[@]}"; do
  SDK_TARBALLS+=("$WORK/tarballs/ag2net-$name-$(node -p "require('$ROOT/packages/$name/package.json').version").tgz")
done
TS_VERSION=$(node -p "require('$ROOT/node_modules/typescript/package.json').version")
TYPES_NODE_VERSION=$(node -p "require('$ROOT/node_modules/@types/node/package.json').version")
cd "$SDK_DIR"
install_log=$(npm install --no-audit --no-fund --prefer-offline "${SDK_TARBALLS[@]}" zod \
  "typescript@$TS_VERSION" "@types/node@$TYPES_NODE_VERSION" 2>&1) || fail "npm install failed: $install_log"
if grep -q EBADENGINE <<<"$install_log"; then
  printf '%s\n' "$install_log" >&2
  fail "npm install warned EBADENGINE (above) on Node $(node --version)"
fi
for name in "${SDK_PACKAGES[@]}"; do
  resolved=$(node -p "require('./package-lock.json').packages['node_modules/@ag2net/$name']?.resolved ?? ''")
  case "$resolved" in
    file:*) ;;
    *) fail "@ag2net/$name did not install from its tarball (resolved: ${resolved:-nothing})" ;;
  esac
done
npx --no-install tsc -p tsconfig.json || fail "README's SDK example does not compile against the packed declarations"

log "a secured stack like npm start's: authInit, nats-server -c server.conf, ag2net-hub with API keys"
STACK="$WORK/stack"
mkdir -p "$STACK"
# The packed @ag2net/auth, from the first consumer's node_modules.
(cd "$WORK/consumer" && node --input-type=module -e '
  import { authInit } from "@ag2net/auth";
  await authInit({ dir: process.argv[1], storeDir: process.argv[2] });
' "$STACK/auth" "$STACK/jetstream") || fail "authInit failed"
# server.conf as written, but on a random port: a flag overrides the file's listen port.
start_nats "$STACK/nats" -c "$STACK/auth/server.conf"
STACK_URL=$NATS_URL
node -e '
  const { randomBytes } = require("crypto");
  const keys = Object.fromEntries(["scholar", "me"].map((name) => [name, randomBytes(24).toString("base64url")]));
  require("fs").writeFileSync(process.argv[1], `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
' "$STACK/api-keys.json"
mkdir -m 700 "$STACK/creds"
# Only what the stack names: no model keys, no NATS settings of the caller.
env -i PATH="$PATH" HOME="$HOME" "$WORK/consumer/node_modules/.bin/ag2net-hub" --nats-url "$STACK_URL" \
  --auth-dir "$STACK/auth" --api-keys "$STACK/api-keys.json" >"$STACK/hub.log" 2>&1 &
HUB_PID=$!
PIDS+=("$HUB_PID")
for _ in $(seq 1 300); do
  grep -q '"msg":"serving"' "$STACK/hub.log" && break
  kill -0 "$HUB_PID" 2>/dev/null || fail "ag2net-hub exited: $(cat "$STACK/hub.log")"
  sleep 0.1
done
grep -q '"msg":"serving"' "$STACK/hub.log" || fail "ag2net-hub is not serving after 30 s: $(cat "$STACK/hub.log")"
echo "hub-service serving at $STACK_URL"

log "run README's SDK example (node sdk.js) twice with what npm start exports"
# The second run attaches to the identities the first one registered, with the credentials it kept.
for run in 1 2; do
  output=$(env -i PATH="$PATH" HOME="$HOME" NATS_URL="$STACK_URL" NATS_CREDS="$STACK/auth/registrant.creds" \
    AG2NET_API_KEYS="$STACK/api-keys.json" AG2NET_CREDS_DIR="$STACK/creds" timeout 60 node sdk.js 2>&1) ||
    fail "run $run of README's SDK example failed; it printed: $output"
  printf '%s\n' "$output"
  [ "$output" = "$EXPECTED_SDK" ] || fail "run $run: expected exactly the line: $EXPECTED_SDK"
done
for name in scholar me; do
  [ "$(stat -c %a "$STACK/creds/$name.creds" 2>/dev/null)" = 600 ] || fail "$STACK/creds/$name.creds is not kept 0600"
done

log "ok"
