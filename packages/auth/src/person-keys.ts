import { hkdfSync } from 'node:crypto';

/**
 * HKDF salt of person keys: a key derived for another purpose from the same secret never equals one of these. It is
 * part of every person's key: another salt gives every person another identity.
 */
const PERSON_KEY_SALT = 'ag2net-bridge person nkey v1';

/** nkey prefix bytes: a seed (`S`) of a user (`U`) key. */
const PREFIX_SEED = 18 << 3;
const PREFIX_USER = 20 << 3;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * The nkey user seed (`SU…`) of the person `name`, derived from a deployment's bridge secret with HKDF-SHA256. Whoever
 * holds the same secret derives the same key: every bridge replica, so any of them can attach the person without
 * shared state, and the `ag2net` command beside the secret, so that a person who chats from the terminal is the
 * person who signs in to the console. Another secret, or another name, gives an unrelated key.
 */
export function personSeed(secret: Uint8Array, name: string): string {
  const raw = new Uint8Array(hkdfSync('sha256', secret, PERSON_KEY_SALT, `person:${name}`, 32));
  return encodeUserSeed(raw);
}

/** A 32-byte ed25519 seed in the nkeys text form: prefix bytes, the seed, CRC-16/XMODEM, base32 without padding. */
function encodeUserSeed(raw: Uint8Array): string {
  const body = new Uint8Array(2 + raw.length);
  body[0] = PREFIX_SEED | (PREFIX_USER >> 5);
  body[1] = (PREFIX_USER & 31) << 3;
  body.set(raw, 2);
  const crc = crc16(body);
  const full = new Uint8Array(body.length + 2);
  full.set(body);
  // Little-endian, as the nkeys codec writes it.
  full[body.length] = crc & 0xff;
  full[body.length + 1] = crc >> 8;
  return base32(full);
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32.charAt((value >>> (bits - 5)) & 31);
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32.charAt((value << (5 - bits)) & 31);
  return out;
}
