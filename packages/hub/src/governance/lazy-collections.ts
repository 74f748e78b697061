/**
 * A `Map` that allocates its storage at the first `set`, and drops it again on `clear`. V8 gives every `new Map()` a
 * hash table of about 190 bytes at once; most channels never fill some of their per-channel maps (an idle channel
 * has no text yet), and at 10,000 idle channels those empty tables were an eighth of the hub's heap. Behaves as a
 * `Map` in every other way (iteration order, `size`, `forEach`), so code typed against `Map` cannot tell.
 */
export class LazyMap<K, V> implements Map<K, V> {
  #map: Map<K, V> | null = null;

  get size(): number {
    return this.#map?.size ?? 0;
  }

  get(key: K): V | undefined {
    return this.#map?.get(key);
  }

  has(key: K): boolean {
    return this.#map?.has(key) ?? false;
  }

  set(key: K, value: V): this {
    (this.#map ??= new Map()).set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.#map?.delete(key) ?? false;
  }

  clear(): void {
    this.#map = null;
  }

  forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }

  entries(): MapIterator<[K, V]> {
    return (this.#map ?? EMPTY_MAP).entries();
  }

  keys(): MapIterator<K> {
    return (this.#map ?? EMPTY_MAP).keys();
  }

  values(): MapIterator<V> {
    return (this.#map ?? EMPTY_MAP).values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Map';
  }
}

/** A `Set` that allocates its storage at the first `add`, and drops it again on `clear`; see `LazyMap`. */
export class LazySet<T> implements Set<T> {
  #set: Set<T> | null = null;

  get size(): number {
    return this.#set?.size ?? 0;
  }

  has(value: T): boolean {
    return this.#set?.has(value) ?? false;
  }

  add(value: T): this {
    (this.#set ??= new Set()).add(value);
    return this;
  }

  delete(value: T): boolean {
    return this.#set?.delete(value) ?? false;
  }

  clear(): void {
    this.#set = null;
  }

  forEach(callback: (value: T, value2: T, set: Set<T>) => void, thisArg?: unknown): void {
    for (const value of this.values()) callback.call(thisArg, value, value, this);
  }

  entries(): SetIterator<[T, T]> {
    return (this.#set ?? EMPTY_SET).entries();
  }

  keys(): SetIterator<T> {
    return this.values();
  }

  values(): SetIterator<T> {
    return (this.#set ?? EMPTY_SET).values();
  }

  [Symbol.iterator](): SetIterator<T> {
    return this.values();
  }

  get [Symbol.toStringTag](): string {
    return 'Set';
  }
}

/** Iterated in place of a storage not allocated yet; never written to. */
const EMPTY_MAP: ReadonlyMap<never, never> = new Map<never, never>();
const EMPTY_SET: ReadonlySet<never> = new Set<never>();
