import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from './sha256.js';

const nodeSha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('sha256Hex', () => {
  it('gives the FIPS 180-4 test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('agrees with node:crypto on UTF-8 text of every length around the block boundaries', () => {
    for (let n = 0; n < 200; n += 1) expect(sha256Hex('é'.repeat(n))).toBe(nodeSha256('é'.repeat(n)));
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (s) => sha256Hex(s) === nodeSha256(s)));
  });
});
