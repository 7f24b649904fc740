/** The one JSON shape of every error response, from every sandfleet service. */
import { Type, type Static } from '@sinclair/typebox'
import { StatusSchema } from './status.ts'

/** Schema of {@link ErrorBody}. */
export const ErrorBodySchema = Type.Object(
  {
    status: StatusSchema,
    error: Type.Object({
      code: Type.String({ description: 'Stable SF_ERR_… code (docs/errors.md)' }),
      message: Type.String(),
      field: Type.Optional(
        Type.String({
          description: 'The request field at fault, as a JSON path without the leading slash (requests/3/timeout_ms)'
        })
      )
    })
  },
  { $id: 'ErrorBody' }
)

/**
 * Body of every non-2xx response: `status` is the same closed set as in results
 * (`invalid_request` for a refused request: 400s, 404, 405, 413, 415; `overloaded` for 429s, …),
 * so a caller switches on one field.
 */
export type ErrorBody = Static<typeof ErrorBodySchema>
