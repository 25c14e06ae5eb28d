/**
 * Errors of the profiles lib. A corpus is data someone wrote by hand or exported, so a bad
 * record must point at its place (`source:line`) instead of failing somewhere inside an index.
 */

export const ProfilesErrorCodes = Object.freeze({
  InvalidCorpus: 'INVALID_CORPUS',
} as const);

/**
 * A corpus (or a document list handed to an engine) that cannot be indexed. Retrying with the
 * same input cannot help, so callers should treat it as permanent.
 */
export class CorpusError extends Error {
  readonly code = ProfilesErrorCodes.InvalidCorpus;
  /** What is wrong, without the location prefix that `message` carries. */
  readonly detail: string;

  /**
   * @param source file name or label of the corpus, as the caller named it
   * @param line 1-based line of the bad record, or `null` when the problem has no single line
   * @param message what is wrong with the record
   */
  constructor(
    readonly source: string,
    readonly line: number | null,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    const location = line === null ? source : `${source}:${line}`;
    super(`${location}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CorpusError';
    this.detail = message;
  }
}
