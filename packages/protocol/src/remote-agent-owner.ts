import { AuthError, type Ag2netErrorOptions } from './errors.js';
import { repr } from './repr.js';

/**
 * A `remote_agent` registration (or attach) the hub refused for its owner: the passport names none, or the
 * admission credential it carries is not the one the operator gave that owner. On the wire it is `auth_failed`
 * with `details.owner`; the hub never says whether the owner is known.
 */
export class RemoteAgentOwnerError extends AuthError {
  override readonly name: string = 'RemoteAgentOwnerError';
  /** The owner the passport named (`''` for none). */
  readonly owner: string;

  constructor(owner: string, options: Omit<Ag2netErrorOptions, 'details'> = {}) {
    super(
      owner === ''
        ? 'a remote_agent passport must name its owner'
        : `owner ${repr(owner)} is not allowed to register remote agents`,
      { ...options, details: { owner } },
    );
    this.owner = owner;
  }
}
