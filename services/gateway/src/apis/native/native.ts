/** The native API: `/v1/execute`, `/v1/execute/batch` and `/v1/sessions`, in the protocol's shapes. */
import type { Api } from '../api.ts'
import { batchRoute } from './batch.ts'
import { executeRoute } from './execute.ts'
import { sessionRoutes } from './sessions.ts'

/** Registers the native routes. */
export const nativeApi: Api = async (app, { router, sessions, schemas }) => {
  executeRoute(app, router, schemas)
  batchRoute(app, router, schemas)
  sessionRoutes(app, sessions, schemas)
}
