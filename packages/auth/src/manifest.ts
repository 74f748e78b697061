import { PrefixSchema } from '@ag2net/protocol';
import { z } from 'zod';

const PublicKey = (kind: 'U' | 'A' | 'O') =>
  z.string().regex(new RegExp(`^${kind}[A-Z2-7]{55}$`), `not an ${kind} public key`);

/** User public key → unix seconds: every JWT of that user issued at or before it is refused. */
const Revocations = z.record(z.string(), z.number().int().min(0));

/**
 * `manifest.json` of an auth directory: every public key `auth init` created, and the revoked users of each
 * account. Public data only: seeds live in the `.nk` and `.creds` files beside it.
 *
 * Two accounts carry a deployment: the **data account** holds every stream, bucket and consumer, and only the hub
 * (`hub-service`) and the operator's tools (`admin`) connect to it; the **identity account** is where every identity,
 * the registrant and the console's operator caller connect, with no JetStream of its own and only what the data
 * account exports to it (docs/security.md, "Accounts").
 */
export const AuthManifestSchema = z.strictObject({
  version: z.literal(2),
  prefix: PrefixSchema,
  operator: z.strictObject({ name: z.string(), public_key: PublicKey('O'), signing_key: PublicKey('O') }),
  system_account: z.strictObject({ name: z.string(), public_key: PublicKey('A') }),
  data_account: z.strictObject({
    name: z.string(),
    public_key: PublicKey('A'),
    /** Signs the admin: each user JWT carries its own permissions. */
    signing_key: PublicKey('A'),
    /** A scoped signing key, role `hub-service`: its users get exactly `hubServicePermissions`, set in the account JWT. */
    hub_service_signing_key: PublicKey('A'),
  }),
  identity_account: z.strictObject({
    name: z.string(),
    public_key: PublicKey('A'),
    /** Signs identities (the hub issues them), the registrant and the operator caller. */
    signing_key: PublicKey('A'),
  }),
  users: z.strictObject({
    hub_service: PublicKey('U'),
    admin: PublicKey('U'),
    registrant: PublicKey('U'),
    operator_caller: PublicKey('U'),
    system: PublicKey('U'),
  }),
  revocations: z.strictObject({ data: Revocations, identity: Revocations }),
});
export type AuthManifest = z.infer<typeof AuthManifestSchema>;

/**
 * The manifest of the first layout, with one hub account for data and identities alike: read only to upgrade a
 * directory in place (its account key and revocations carry over).
 */
export const LegacyAuthManifestSchema = z.looseObject({
  version: z.literal(1),
  prefix: PrefixSchema,
  hub_account: z.looseObject({ public_key: PublicKey('A') }),
  revocations: Revocations,
});
export type LegacyAuthManifest = z.infer<typeof LegacyAuthManifestSchema>;
