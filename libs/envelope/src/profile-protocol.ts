/** Request to a profile service's `search` endpoint (`chorus.profile.<name>.search`). */
export interface ProfileSearchRequest {
  /** The text to search. */
  text: string;
  /** How many hits to return, best first. */
  limit: number;
  /** The workflow asking, for the profile's logs. */
  correlation_id?: string;
}

/** One hit of a profile: a document id and the profile's own score (not comparable across profiles). */
export interface ProfileHit {
  id: string;
  score: number;
}

export interface ProfileSearchReply {
  profile: string;
  hits: ProfileHit[];
  /** Documents in the profile's index. */
  corpus_size: number;
  took_ms: number;
}

/** Request to a profile service's `documents` endpoint: fetch stored documents by id. */
export interface ProfileDocumentsRequest {
  ids: string[];
  /** Cut each text to this many characters. */
  max_chars?: number;
  /** The first `lead` ids (the best ranked, which an answer quotes) are cut to `lead_max_chars` instead. */
  lead?: number;
  lead_max_chars?: number;
  /**
   * Cut a longer text to its passage that best matches this query (whole sentences, or the part of
   * one longer sentence around its first match, marked with …), rather than
   * to its beginning.
   */
  query?: string;
}

export interface ProfileDocument {
  id: string;
  title: string;
  text: string;
}

export interface ProfileDocumentsReply {
  documents: ProfileDocument[];
}
