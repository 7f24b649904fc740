/**
 * The fleet's shared secret on the runner's internal API: with `runnerSecret` set, every request
 * but the probes (`/healthz`, `/readyz`) must carry `Authorization: Bearer SECRET`; anything else
 * is answered 401 `SF_ERR_RUNNER_UNAUTHORIZED` before it is parsed or queued. Gateways send it
 * (their own `runnerSecret`); Prometheus can too (`authorization: {credentials: …}`).
 */
import { createHash, timingSafeEqual } from 'node:crypto'

/** Paths open without the secret: the orchestrator's probes, which say only up and ready. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz'])

const BEARER = 'bearer '

/**
 * A check of `Authorization` headers against `secret`, in constant time: both sides are hashed
 * to 32 bytes first, so neither the secret's length nor a matching prefix shows in the timing.
 */
export function bearerCheck(secret: string): (authorization: string | string[] | undefined) => boolean {
  const want = createHash('sha256').update(secret).digest()
  return (authorization) => {
    if (typeof authorization !== 'string' || authorization.length <= BEARER.length) return false
    if (authorization.slice(0, BEARER.length).toLowerCase() !== BEARER) return false
    const got = createHash('sha256').update(authorization.slice(BEARER.length)).digest()
    return timingSafeEqual(got, want)
  }
}
