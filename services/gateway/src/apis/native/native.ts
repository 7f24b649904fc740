/**
 * The native API: `/v1/execute`, `/v1/execute/batch`, `/v1/judge`, `/v1/judge/batch` and `/v1/sessions`, in the
 * protocol's shapes.
 */
import type { Api } from '../api.ts'
import { batchRoute } from './batch.ts'
import { executeRoute } from './execute.ts'
import { judgeRoutes } from './judge.ts'
import { sessionRoutes } from './sessions.ts'

/** Registers the native routes. */
const routes: Api['routes'] = async (app, { router, sessions, schemas }) => {
  executeRoute(app, router, schemas)
  batchRoute(app, router, schemas)
  judgeRoutes(app, router, schemas)
  sessionRoutes(app, sessions, schemas)
}

/** The native API (/v1): execute, batches, judges, sessions. */
export const nativeApi: Api = {
  routes,
  tags: [
    { name: 'execute', description: 'Run code in fresh sandboxes: one call, or a batch' },
    {
      name: 'judge',
      description:
        'Judge programs against their tests (Python, C++, C, JavaScript): compiled once, each test a fresh process, compared outside it'
    },
    { name: 'sessions', description: "Stateful sessions: cells run in one interpreter's state" }
  ]
}
