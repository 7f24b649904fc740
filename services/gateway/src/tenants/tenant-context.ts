/**
 * The tenant a request runs for, as an async context: set by the auth hook for the rest of the
 * request's handling (`tenantContext.run`), read where a call leaves for a runner
 * (`runners/router.ts`), whatever API and closures lie between (the compatible APIs and MCP build
 * their calls without the request at hand).
 */
import { AsyncLocalStorage } from 'node:async_hooks'

/** The name of the tenant of the request being handled; no store outside a request, or without keys. */
export const tenantContext = new AsyncLocalStorage<string>()

/** The tenant of the request being handled, if any. */
export function currentTenant(): string | undefined {
  return tenantContext.getStore()
}
