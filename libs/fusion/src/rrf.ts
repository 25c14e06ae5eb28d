/** One profile's results, best first. */
export interface RankedList {
  profile: string;
  ids: readonly string[];
}

export interface RrfOptions {
  /** The RRF constant; larger k flattens the advantage of top ranks. */
  k: number;
  /** Only the first `rankWindow` results of each list are fused. */
  rankWindow: number;
  /** Per-profile weight w_p, finite and >= 0; absent profiles weigh 1. */
  weights?: Readonly<Record<string, number>>;
}

export function defaultRrfOptions(): RrfOptions {
  return { k: 60, rankWindow: 100 };
}

/** A fused document: its RRF score and its 1-based rank in each list that had it. */
export interface FusedItem {
  id: string;
  score: number;
  ranks: Record<string, number>;
}

/**
 * Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, 2009): score(d) = Σ_p w_p / (k + rank_p(d)).
 *
 * Deterministic whatever the order of `lists` (one per profile): contributions are summed in
 * profile-name order (so floating-point rounding is the same), and ties are broken by best single
 * rank, then by the number of lists that returned the document, then by id. A profile given more
 * than one list counts once, with the first of them.
 */
export function fuseRrf(lists: readonly RankedList[], options: RrfOptions): FusedItem[] {
  if (!(options.k >= 0)) throw new RangeError(`k must be >= 0, got ${options.k}`);
  if (!(options.rankWindow >= 1)) throw new RangeError(`rankWindow must be >= 1, got ${options.rankWindow}`);
  const ordered = [...lists].sort((a, b) => (a.profile < b.profile ? -1 : a.profile > b.profile ? 1 : 0));
  const items = new Map<string, FusedItem & { best: number; count: number; list: number }>();
  for (let l = 0; l < ordered.length; l++) {
    const list = ordered[l];
    const profile = list.profile;
    if (l > 0 && ordered[l - 1].profile === profile) continue; // a profile's first list counts, once
    const weight = weightOf(options.weights, profile);
    // Defined, not assigned, for a profile named `__proto__` (assigning would set the prototype);
    // plain assignment otherwise, which is several times faster.
    const special = profile === '__proto__';
    const n = Math.min(list.ids.length, options.rankWindow);
    for (let i = 0; i < n; i++) {
      const id = list.ids[i];
      let item = items.get(id);
      if (!item) {
        item = { id, score: 0, ranks: {}, best: Infinity, count: 0, list: -1 };
        items.set(id, item);
      } else if (item.list === l) {
        continue; // a repeated id keeps its first rank in the list
      }
      item.list = l;
      const rank = i + 1;
      if (special) Object.defineProperty(item.ranks, profile, { value: rank, enumerable: true, writable: true, configurable: true });
      else item.ranks[profile] = rank;
      item.score += weight / (options.k + rank);
      if (rank < item.best) item.best = rank;
      item.count += 1;
    }
  }
  return [...items.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || b.count - a.count || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ id, score, ranks }) => ({ id, score, ranks }));
}

/**
 * A profile's weight: 1 unless the weights name it (an own key: a profile called `constructor` is
 * not Object.prototype's). A negative weight would rank a document below those no profile
 * returned, and a non-finite one makes every score NaN or infinite, so both are refused.
 */
function weightOf(weights: Readonly<Record<string, number>> | undefined, profile: string): number {
  if (!weights || !Object.hasOwn(weights, profile)) return 1;
  const weight = weights[profile];
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
    throw new RangeError(`the weight of profile ${profile} must be a finite number >= 0, got ${String(weight)}`);
  }
  return weight;
}
