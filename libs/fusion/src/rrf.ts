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
  /** Per-profile weight w_p; absent profiles weigh 1. */
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
 * Deterministic whatever the order of `lists`: contributions are summed in profile-name order (so
 * floating-point rounding is the same), and ties are broken by best single rank, then by the number
 * of lists that returned the document, then by id.
 */
export function fuseRrf(lists: readonly RankedList[], options: RrfOptions): FusedItem[] {
  if (!(options.k >= 0)) throw new RangeError(`k must be >= 0, got ${options.k}`);
  if (!(options.rankWindow >= 1)) throw new RangeError(`rankWindow must be >= 1, got ${options.rankWindow}`);
  const ordered = [...lists].sort((a, b) => (a.profile < b.profile ? -1 : a.profile > b.profile ? 1 : 0));
  const items = new Map<string, FusedItem & { best: number; count: number }>();
  for (const list of ordered) {
    const weight = options.weights?.[list.profile] ?? 1;
    const n = Math.min(list.ids.length, options.rankWindow);
    for (let i = 0; i < n; i++) {
      const id = list.ids[i];
      let item = items.get(id);
      if (!item) {
        item = { id, score: 0, ranks: {}, best: Infinity, count: 0 };
        items.set(id, item);
      }
      if (item.ranks[list.profile] !== undefined) continue; // a repeated id keeps its first rank
      const rank = i + 1;
      item.ranks[list.profile] = rank;
      item.score += weight / (options.k + rank);
      item.best = Math.min(item.best, rank);
      item.count += 1;
    }
  }
  return [...items.values()]
    .sort((a, b) => b.score - a.score || a.best - b.best || b.count - a.count || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map(({ id, score, ranks }) => ({ id, score, ranks }));
}
