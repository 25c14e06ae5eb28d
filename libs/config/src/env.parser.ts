/** Reads typed values out of an environment record, collecting every problem instead of stopping at the first. */
export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  string(name: string, fallback: string): string {
    const v = this.env[name];
    return v === undefined || v === '' ? fallback : v;
  }

  optional(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  }

  /** A stream's byte limit: -1 (none), or at least 1 MiB; undefined when not set. */
  byteLimit(name: string): number | undefined {
    const raw = this.optional(name);
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (n === -1 || (Number.isSafeInteger(n) && n >= MIB)) return n;
    this.problems.push(`${name} must be -1 (no limit) or a number of bytes of at least ${MIB} (1 MiB), got ${JSON.stringify(raw)}`);
    return undefined;
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) {
      this.problems.push(`${name} must be a number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return n;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
      return fallback;
    }
    return raw as T;
  }

  /**
   * A comma-separated list. With `set`, a name given twice (two services of one profile) or a list
   * that names nothing (`,`) is a problem too.
   */
  list(name: string, fallback: string[], pattern?: RegExp, options: { set?: boolean; allowed?: readonly string[] } = {}): string[] {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
    const bad = pattern ? items.filter((i) => !pattern.test(i)) : [];
    if (bad.length > 0) {
      const allowed = options.allowed ? ` (each one of ${options.allowed.join(', ')})` : '';
      this.problems.push(`${name} has invalid entries: ${bad.join(', ')}${allowed}`);
    }
    if (options.set) {
      const twice = [...new Set(items.filter((item, i) => items.indexOf(item) !== i))];
      if (twice.length > 0) this.problems.push(`${name} names ${twice.join(', ')} more than once`);
      if (items.length === 0) this.problems.push(`${name} names nothing (${JSON.stringify(raw)}); leave it unset for the default, ${fallback.join(',')}`);
    }
    return [...new Set(items.filter((i) => !bad.includes(i)))];
  }

  /** `name=number,name=number` into a record, e.g. `CHORUS_RRF_WEIGHTS=bm25=1,trigram=0.5`; each weight from 0 to `max`. */
  weights(name: string, pattern: RegExp, max: number): Record<string, number> {
    const raw = this.optional(name);
    if (raw === undefined) return {};
    const out: Record<string, number> = {};
    for (const item of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
      const [key, value, ...extra] = item.split('=');
      const n = Number(value);
      if (!key || !pattern.test(key) || value === undefined || value.trim() === '' || extra.length > 0 || !Number.isFinite(n) || n < 0 || n > max) {
        this.problems.push(`${name} must look like bm25=1,trigram=0.5 (weights from 0 to ${max}); bad entry ${JSON.stringify(item)}`);
      } else if (Object.hasOwn(out, key)) {
        this.problems.push(`${name} gives ${key} two weights (${out[key]} and ${n})`);
      } else out[key] = n;
    }
    return out;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    this.problems.push(`${name} must be true or false, got ${JSON.stringify(raw)}`);
    return fallback;
  }
}

export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const MIB = 1024 * 1024;
