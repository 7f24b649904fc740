/** Per-call options. */
export interface CallOptions {
  /** Aborts the call: it rejects with `SF_ERR_CLIENT_ABORTED`. */
  signal?: AbortSignal
  /** Total time for the call, retries included, ms (default: `timeout_ms` + `deadlineSlackMs`). */
  deadlineMs?: number
}
