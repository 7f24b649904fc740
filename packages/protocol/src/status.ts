/**
 * The closed set of result statuses. Every caller switches on `status` first.
 *
 * - The code's doing: `ok`, `error`, `timeout`, `memory`, `killed`.
 * - The fleet's doing (retriable, never the code's fault): `overloaded`, `queue_timeout`,
 *   `infra_error`.
 * - The request's doing: `invalid_request` (refused, nothing ran: HTTP 400 for a field; 404, 405,
 *   413, 415 and the session API's refusals in error bodies).
 */
import { Type, type Static } from '@sinclair/typebox'

/** Statuses produced by running the user's code. */
export const USER_STATUSES = ['ok', 'error', 'timeout', 'memory', 'killed'] as const
/** Statuses produced by the fleet; a caller may retry them, elsewhere or later. */
export const FLEET_STATUSES = ['overloaded', 'queue_timeout', 'infra_error'] as const
/** Status of a request that was rejected before anything ran. */
export const REQUEST_STATUSES = ['invalid_request'] as const

/** Every status, in documentation order. */
export const STATUSES = [...USER_STATUSES, ...FLEET_STATUSES, ...REQUEST_STATUSES] as const

/** Schema of {@link Status}. */
export const StatusSchema = Type.Union(
  STATUSES.map((s) => Type.Literal(s)),
  {
    $id: 'Status',
    description:
      'ok | error | timeout | memory | killed (the code) · overloaded | queue_timeout | infra_error (the fleet, retriable) · invalid_request (refused, nothing ran: HTTP 400, 404, 405, 413, …)'
  }
)

/** A result status. */
export type Status = (typeof STATUSES)[number]
/** A status produced by the user's code. */
export type UserStatus = (typeof USER_STATUSES)[number]
/** A status produced by the fleet. */
export type FleetStatus = (typeof FLEET_STATUSES)[number]

// Compile-time check that the schema and the union agree.
const _statusCheck: Static<typeof StatusSchema> extends Status ? true : false = true
void _statusCheck

const retriable: ReadonlySet<string> = new Set(FLEET_STATUSES)
const user: ReadonlySet<string> = new Set(USER_STATUSES)

/** True for `overloaded`, `queue_timeout` and `infra_error`: the fleet's fault, safe to retry. */
export function isRetriable(status: Status): status is FleetStatus {
  return retriable.has(status)
}

/** True when the status describes what the user's code did (it ran). */
export function isUserStatus(status: Status): status is UserStatus {
  return user.has(status)
}

/** True when the code ran and the status counts as a tool error for reward shaping. */
export function isToolError(status: Status): boolean {
  return status !== 'ok' && user.has(status)
}
