/**
 * One error shape everywhere: every non-2xx answer of the gateway is an `ErrorBody`
 * (`{status, error: {code, message, field?}}`), whether it comes from schema validation, the
 * body parser, a 404, admission or an unexpected throw.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { RouteMethods } from '@sandfleet/protocol/http'
import { GatewayError, RunnerRefusal } from '../errors.ts'
import type { GatewayMetrics } from '../metrics.ts'

/** The JSON path (no leading slash) of the field an ajv error is about. */
export function fieldOf (e: FastifySchemaValidationError): string {
  const path = e.instancePath.replace(/^\//, '')
  const params = e.params as { missingProperty?: string, additionalProperty?: string }
  const child = params.missingProperty ?? params.additionalProperty
  if (child !== undefined) return path === '' ? child : `${path}/${child}`
  return path
}

/** The message of a `code` over `maxCodeBytes`, the same from the schema and from a compatible API's check. */
export function codeTooLong (limit: number, what: string): string {
  return `code is ${what}, over this deployment's limit of ${limit} bytes (maxCodeBytes, --max-code-bytes)`
}

/** Fastify `schemaErrorFormatter`: the first problem, as a {@link GatewayError} naming its field. */
export function formatSchemaErrors (errors: FastifySchemaValidationError[], dataVar: string): Error {
  const e = errors[0]
  if (e === undefined) return new GatewayError('SF_ERR_GATEWAY_INVALID_REQUEST', `invalid ${dataVar}`)
  const field = fieldOf(e)
  let message = e.message ?? 'is invalid'
  const params = e.params as { allowedValues?: unknown[], additionalProperty?: string, limit?: number }
  // The one maxLength the deployment sets: `code`, held to maxCodeBytes (a string has at least
  // as many UTF-8 bytes as characters, so more characters than the limit is over it in bytes).
  if (e.keyword === 'maxLength' && /(^|\/)code$/.test(field) && params.limit !== undefined) {
    return new GatewayError('SF_ERR_GATEWAY_INVALID_REQUEST', codeTooLong(params.limit, `more than ${params.limit} characters`), { field })
  }
  if (e.keyword === 'additionalProperties') message = 'is not a known field'
  else if (e.keyword === 'required') message = 'is required'
  else if (e.keyword === 'const' || e.keyword === 'anyOf') {
    // a union of literals (language, …): say what is allowed, once
    const allowed = errors.filter((x) => x.instancePath === e.instancePath && x.keyword === 'const')
      .map((x) => JSON.stringify((x.params as { allowedValue?: unknown }).allowedValue))
    message = allowed.length > 0 ? `must be one of ${allowed.join(', ')}` : message
  } else if (params.allowedValues !== undefined) message = `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  return new GatewayError('SF_ERR_GATEWAY_INVALID_REQUEST', `${field === '' ? dataVar : field} ${message}`, { field })
}

/** Maps whatever was thrown to a {@link GatewayError}; `maxBodyBytes` is said in the answer to a body over it. */
export function toGatewayError (err: FastifyError | GatewayError | Error, maxBodyBytes?: number): GatewayError {
  if (err instanceof GatewayError) return err
  const e = err as FastifyError
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('SF_ERR_GATEWAY_INVALID_JSON', `request body is not valid JSON: ${e.message}`, { cause: err })
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('SF_ERR_GATEWAY_BODY_TOO_LARGE', maxBodyBytes === undefined
        ? 'request body is larger than this gateway accepts (maxBodyBytes, --max-body-bytes)'
        : `request body is larger than ${maxBodyBytes} bytes, this gateway's maxBodyBytes (--max-body-bytes)`, { cause: err })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('SF_ERR_GATEWAY_UNSUPPORTED_MEDIA_TYPE', 'request body must be application/json', { cause: err })
  }
  if (e.validation !== undefined) return toGatewayError(formatSchemaErrors(e.validation, e.validationContext ?? 'body'), maxBodyBytes)
  if (err instanceof SyntaxError) return new GatewayError('SF_ERR_GATEWAY_INVALID_JSON', `request body is not valid JSON: ${err.message}`, { cause: err })
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new GatewayError('SF_ERR_GATEWAY_INVALID_REQUEST', e.message, { cause: err })
  }
  return new GatewayError('SF_ERR_GATEWAY_INTERNAL', 'internal error', { cause: err })
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot take (a bad percent-escape, a parameter
 * past its length) is a 400 ErrorBody naming `url`, not Fastify's own error shape.
 */
export function frameworkError (err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(400).type('application/json').send(new GatewayError('SF_ERR_GATEWAY_INVALID_REQUEST', err.message, { field: 'url' }).toBody())
}

/**
 * Installs the error handler and the not-found handler on `app` (call on the root instance,
 * before the routes): a path no route has is a 404, a path that takes other methods a 405 whose
 * `Allow` header lists them.
 */
export function installErrorShape (app: FastifyInstance, metrics: GatewayMetrics, limits: { maxBodyBytes: number }): void {
  const methods = new RouteMethods()
  app.addHook('onRoute', (route) => { methods.add(route.method, route.url) })
  app.setSchemaErrorFormatter(formatSchemaErrors)
  app.setErrorHandler((err, request, reply) => {
    if (err instanceof RunnerRefusal) {
      metrics.rejected.inc({ reason: err.code })
      void reply.code(err.statusCode).type('application/json').send(err.body)
      return
    }
    const ge = toGatewayError(err as Error, limits.maxBodyBytes)
    if (ge.code === 'SF_ERR_GATEWAY_INTERNAL') request.log.error({ err }, 'unexpected error')
    metrics.rejected.inc({ reason: ge.code })
    void reply.code(ge.statusCode).type('application/json').send(ge.toBody())
  })
  app.setNotFoundHandler((request, reply) => {
    const allow = methods.allowed(request.url)
    const ge = allow.length > 0
      ? new GatewayError('SF_ERR_GATEWAY_METHOD_NOT_ALLOWED', `${request.url.split('?', 1)[0]} does not take ${request.method}; it takes ${allow.join(', ')}`)
      : new GatewayError('SF_ERR_GATEWAY_NOT_FOUND', `no route ${request.method} ${request.url}`)
    metrics.rejected.inc({ reason: ge.code })
    if (allow.length > 0) void reply.header('allow', allow.join(', '))
    void reply.code(ge.statusCode).send(ge.toBody())
  })
}
