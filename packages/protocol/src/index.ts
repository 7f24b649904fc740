/**
 * sandfleet's wire contract, written once: the schemas give the TypeScript types, the Fastify
 * validation, the OpenAPI document and the client's types.
 *
 * @example
 * ```ts
 * import { type ExecRequest, type ExecResult, isRetriable } from '@sandfleet/protocol'
 * const req: ExecRequest = { code: 'print(1+1)', timeout_ms: 2000 }
 * const res = await fetch('http://127.0.0.1:8080/v1/execute', {
 *   method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req)
 * }).then((r) => r.json()) as ExecResult
 * if (isRetriable(res.status)) { ... } // the fleet's fault: retry, never penalise the model
 * ```
 */
export * from './status.ts'
export * from './exec.ts'
export * from './deadlines.ts'
export * from './batch.ts'
export * from './judge-languages.ts'
export * from './judge.ts'
export * from './errors.ts'
export * from './runner.ts'
export * from './runner-api.ts'
export * from './call-context.ts'
export * from './session.ts'
export * from './sandbox.ts'
export * from './info.ts'
export * from './json-depth.ts'
export * from './request-fields.ts'
