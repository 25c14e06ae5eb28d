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
  /** Truncate each text to this many characters. */
  max_chars?: number;
}

export interface ProfileDocument {
  id: string;
  title: string;
  text: string;
}

export interface ProfileDocumentsReply {
  documents: ProfileDocument[];
}
