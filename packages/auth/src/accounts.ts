import type { HubNames } from '@ag2net/protocol';
import type { Export, Import } from '@nats-io/jwt';

/**
 * One service the data account exports to the identity account. A service import makes nats-server rewrite the
 * requester's reply subject into one it minted (`_R_.…`) and route the answer back into the requester's account, so
 * nothing a responder of the data account answers (the hub, or nats-server's JetStream API) can land on a subject of
 * the data account, whatever reply subject the requester chose.
 */
export interface AccountService {
  /** The export's and import's name in the account JWTs. */
  readonly name: string;
  /** The subject, the same in both accounts. */
  readonly subject: string;
  /** `Stream` where one request gets several answers (a pull, the hub roster), else `Singleton`. */
  readonly responseType: 'Singleton' | 'Stream';
  /**
   * The importer shares the requester's details (`Nats-Request-Info`: its account, user key, JWT and name): the hub
   * checks who is calling from them, on top of the subject permissions.
   */
  readonly share: boolean;
}

/**
 * Everything the identity account reaches of the data account, and nothing else:
 * - `rpc`: the hub's operations, `<p>.hub.v1.>`: the home subjects `<p>.hub.v1.<op>[.<caller>]` and the routed
 *   `<p>.hub.v1.<op>.<partition>.<caller>` alike; each identity's JWT narrows it to its own `<p>.hub.v1.*.<id>` and
 *   `<p>.hub.v1.*.*.<id>` and the public operations;
 * - `roster`: the hub roster `<p>.hubs.v1.ping`, answered by every hub (the operator caller only may ask);
 * - `inbox-next`, `inbox-info`, `inbox-ack`: pulling, reading the info of and acking an inbox consumer; each
 *   identity's JWT narrows them to its own consumer, `agent_<id>`. The pulled messages and the server's answers go
 *   to the requester's reply subject in the identity account; an ack's subject is the consumer's own
 *   `$JS.ACK.<P>_INBOX.agent_<id>.…` in both accounts;
 * - `js-info`: `$JS.API.INFO`. Identities may not call it; imported so that the identity account, which has no
 *   JetStream, gets no JetStream API of its own from the system account (that one would answer every
 *   `$JS.API.CONSUMER.INFO` itself with "JetStream not enabled for account").
 */
export function dataAccountServices(names: HubNames): readonly AccountService[] {
  return [
    { name: 'rpc', subject: `${names.prefix}.hub.v1.>`, responseType: 'Singleton', share: true },
    { name: 'roster', subject: names.hubsPing, responseType: 'Stream', share: true },
    {
      name: 'inbox-next',
      subject: `$JS.API.CONSUMER.MSG.NEXT.${names.inboxStream}.*`,
      responseType: 'Stream',
      share: false,
    },
    {
      name: 'inbox-info',
      subject: `$JS.API.CONSUMER.INFO.${names.inboxStream}.*`,
      responseType: 'Singleton',
      share: false,
    },
    { name: 'inbox-ack', subject: `$JS.ACK.${names.inboxStream}.>`, responseType: 'Singleton', share: false },
    { name: 'js-info', subject: '$JS.API.INFO', responseType: 'Singleton', share: false },
  ];
}

/** The data account's exports: every `dataAccountServices` entry, as a public service export. */
export function dataAccountExports(names: HubNames): Export[] {
  return dataAccountServices(names).map((s) => ({
    name: s.name,
    subject: s.subject,
    type: 'service',
    response_type: s.responseType,
  }));
}

/** The identity account's imports from the data account (`dataAccount`, its public key): the same services. */
export function identityAccountImports(names: HubNames, dataAccount: string): Import[] {
  return dataAccountServices(names).map((s) => ({
    name: s.name,
    subject: s.subject,
    account: dataAccount,
    type: 'service',
    ...(s.share ? { share: true } : {}),
  }));
}
