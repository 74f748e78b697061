import { useEffect, useState } from 'preact/hooks';

/** A parsed hash route: `#/channels/abc?x=1` → `{ parts: ['channels', 'abc'], params: { x: '1' } }`. */
export interface Route {
  readonly parts: readonly string[];
  readonly params: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const text = hash.replace(/^#\/?/, '');
  const q = text.indexOf('?');
  const path = q < 0 ? text : text.slice(0, q);
  const query = q < 0 ? '' : text.slice(q + 1);
  return {
    parts: path
      .split('/')
      .filter((p) => p !== '')
      .map(decodeURIComponent),
    params: new URLSearchParams(query),
  };
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = (): void => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseHash(hash);
}

export function navigate(hash: string): void {
  location.hash = hash;
}

/** Goes to `hash` without a history entry: the entry being replaced (say, one with a key in it) is gone. */
export function replaceRoute(hash: string): void {
  history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
  dispatchEvent(new HashChangeEvent('hashchange'));
}
