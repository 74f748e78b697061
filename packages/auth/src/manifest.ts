import { PrefixSchema } from '@ag2net/protocol';
import { z } from 'zod';

const PublicKey = (kind: 'U' | 'A' | 'O') =>
  z.string().regex(new RegExp(`^${kind}[A-Z2-7]{55}$`), `not an ${kind} public key`);

/**
 * `manifest.json` of an auth directory: every public key `auth init` created, and the revoked users. Public data
 * only: seeds live in the `.nk` and `.creds` files beside it.
 */
export const AuthManifestSchema = z.strictObject({
  version: z.literal(1),
  prefix: PrefixSchema,
  operator: z.strictObject({ name: z.string(), public_key: PublicKey('O'), signing_key: PublicKey('O') }),
  system_account: z.strictObject({ name: z.string(), public_key: PublicKey('A') }),
  hub_account: z.strictObject({
    name: z.string(),
    public_key: PublicKey('A'),
    /** Signs identities (and the admin and registrant): each user JWT carries its own permissions. */
    signing_key: PublicKey('A'),
    /** A scoped signing key, role `hub-service`: its users get exactly `hubServicePermissions`, set in the account JWT. */
    hub_service_signing_key: PublicKey('A'),
  }),
  users: z.strictObject({
    hub_service: PublicKey('U'),
    admin: PublicKey('U'),
    registrant: PublicKey('U'),
    system: PublicKey('U'),
  }),
  /** User public key → unix seconds: every JWT of that user issued at or before it is refused. */
  revocations: z.record(z.string(), z.number().int().min(0)),
});
export type AuthManifest = z.infer<typeof AuthManifestSchema>;
