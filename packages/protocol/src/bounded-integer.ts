/**
 * An optional whole-number field of the contract, within its bounds, with its default (the schemas' one way of writing
 * one).
 */
import { Type, type TInteger, type TOptional } from '@sinclair/typebox'

/** An optional integer in `[minimum, maximum]` that is `defaultValue` when absent, described by `description`. */
export function boundedInteger(
  minimum: number,
  maximum: number,
  defaultValue: number,
  description: string
): TOptional<TInteger> {
  return Type.Optional(Type.Integer({ minimum, maximum, default: defaultValue, description }))
}
