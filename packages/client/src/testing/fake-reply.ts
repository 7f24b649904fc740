/** The fake fleet's HTTP error replies: what a behavior answers instead of a result. */
import type { ErrorBody } from '@sandfleet/protocol'

/** A non-2xx answer the behavior wants sent. */
export interface FakeHttpReply {
  http: number
  body: ErrorBody | string
  headers?: Record<string, string>
}

/** An {@link ErrorBody} reply. */
export function errorReply(
  http: number,
  status: ErrorBody['status'],
  code: string,
  message: string,
  headers?: Record<string, string>
): FakeHttpReply {
  return { http, body: { status, error: { code, message } }, ...(headers ? { headers } : {}) }
}
