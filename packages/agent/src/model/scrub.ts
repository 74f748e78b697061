/** What a scrubbed secret is replaced with. */
export const SCRUBBED = '***';

/** The longest message `scrubMessage` returns, in characters (an ellipsis included). */
export const MAX_CAUSE_MESSAGE = 160;

/** A run this long of the request's text found in a message means the message quotes the request. */
const QUOTE_WINDOW = 24;

/** A secret's value after `Bearer ` or `api key:`: up to a space, a quote, a bracket or `&`, less closing punctuation. */
const VALUE = String.raw`[^\s"',;&()[\]{}]*[^\s"',;&()[\]{}.:!?]`;

/**
 * Secrets by their look, for keys nobody told us about: `sk-…` style keys, bearer tokens, URL credentials, secret
 * query parameters, `api key: …` phrases, and long runs of letters and digits (most API keys and tokens). Each
 * replaces the secret only, keeping the words around it.
 */
const SECRET_PATTERNS: readonly (readonly [RegExp, string])[] = [
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_*.-]{2,}[A-Za-z0-9_*]/g, SCRUBBED],
  [new RegExp(String.raw`\b(bearer|basic)\s+${VALUE}`, 'gi'), `$1 ${SCRUBBED}`],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, `$1${SCRUBBED}@`],
  [/([?&](?:api[_-]?key|key|token|access_token|secret|password|sig|signature)=)[^&\s"']+/gi, `$1${SCRUBBED}`],
  [
    new RegExp(
      String.raw`\b(api[_ -]?key|x-api-key|token|secret|password|authorization)(\s*(?:provided)?\s*[:=]\s*)(?!(?:bearer|basic)\s)["']?${VALUE}`,
      'gi',
    ),
    `$1$2${SCRUBBED}`,
  ],
  [/[A-Za-z0-9_-]{32,}/g, SCRUBBED],
];

/**
 * `text` with every secret gone: each of `secrets` (the keys the model was built with) wherever it occurs, then
 * whatever looks like a key, a token or URL credentials (`SECRET_PATTERNS`).
 */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(SCRUBBED);
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Whether `message` quotes any of `texts` (a run of `QUOTE_WINDOW` characters of one of them, spaces normalised). */
export function quotesAny(message: string, texts: readonly string[]): boolean {
  const flat = (s: string): string => s.replace(/\s+/g, ' ');
  const m = flat(message);
  if (m.length < QUOTE_WINDOW) return false;
  const haystacks = texts.map(flat).filter((t) => t.length >= QUOTE_WINDOW);
  for (let i = 0; i + QUOTE_WINDOW <= m.length; i++) {
    const window = m.slice(i, i + QUOTE_WINDOW);
    if (haystacks.some((h) => h.includes(window))) return true;
  }
  return false;
}

/**
 * A provider's or an error's message as a failure's cause may carry it: its first line, secrets scrubbed, at most
 * `MAX_CAUSE_MESSAGE` characters; `null` when it quotes the request (`request`: the prompt's texts), which a person
 * other than the agent's owner must not see.
 */
export function scrubMessage(
  message: string,
  options: { readonly secrets?: readonly string[]; readonly request?: readonly string[] } = {},
): string | null {
  const line = (message.split('\n')[0] ?? '').trim();
  if (options.request !== undefined && quotesAny(line, options.request)) return null;
  const scrubbed = scrubSecrets(line, options.secrets);
  return scrubbed.length <= MAX_CAUSE_MESSAGE ? scrubbed : `${scrubbed.slice(0, MAX_CAUSE_MESSAGE - 1)}…`;
}
