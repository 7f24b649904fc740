/**
 * The gateway's APIs, registered in this order by app.ts: the native /v1 API, then the compatible
 * ones. Each is one folder here and one item of the list.
 */
import type { Api } from './api.ts'
import { codeJudgeApi } from './code-judge/code-judge.ts'
import { e2bApi } from './e2b/e2b.ts'
import { mcpApi } from './mcp/mcp.ts'
import { nativeApi } from './native/native.ts'
import { pistonApi } from './piston/piston.ts'
import { sandboxFusionApi } from './sandbox-fusion/sandbox-fusion.ts'

/** Every API the gateway serves. */
export const APIS: readonly Api[] = [nativeApi, sandboxFusionApi, codeJudgeApi, mcpApi, pistonApi, e2bApi]
