/** The 202 of a submission: the workflow's id and where to read it. */
export interface Accepted {
  correlation_id: string;
  status_url: string;
}

/** The 202 of a cancel. */
export interface Cancelling {
  correlation_id: string;
  status: 'cancelling';
}
