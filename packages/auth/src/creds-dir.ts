/**
 * The `<server>` directory of a server someone else runs where `npm start` and the `ag2net` command keep identities'
 * credentials (`creds/<server>/<prefix>/<name>.creds`): its URL(s) as a directory name. Credentials one server's hub
 * issued name identities the other servers' registries do not know, so each server has its own directory.
 */
export function credsServerKey(natsUrl: string): string {
  return `url_${natsUrl.replace(/^nats:\/\//, '').replace(/[^A-Za-z0-9_-]+/g, '_')}`;
}
