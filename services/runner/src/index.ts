/**
 * sandfleet's runner: a queue with deadlines in front of pools of pre-warmed sandboxes, one
 * pool per language, and the internal HTTP API gateways call.
 *
 * @example
 * ```ts
 * import { Runner, runnerConfig, buildRunnerApp } from '@sandfleet/runner'
 * const runner = new Runner(runnerConfig({ backend: 'auto', poolSize: 4 }))
 * await runner.start()                        // checks the backend, warms the pool
 * console.log(runner.backendReason)           // which isolation it chose, and why
 * const res = await runner.execute({ code: 'print(1+1)', timeout_ms: 2000 })
 * // res.status === 'ok', res.stdout === '2\n'; never rejects: faults are statuses
 * const app = buildRunnerApp(runner)          // Fastify, not listening
 * await app.listen({ host: '127.0.0.1', port: 8081 })
 * await app.close(); await runner.close()     // drain, then close every sandbox
 * ```
 */
export { Runner, type RunnerOptions, type PreparedCall, type RequestProblem } from './runner/runner.ts'
export { buildRunnerApp, type RunnerAppOptions } from './app.ts'
export {
  BACKENDS,
  RUNNER_COMMAND,
  RUNNER_ENV,
  RUNNER_FLAGS,
  RunnerConfigSchema,
  parseRunnerConfig,
  readRunnerConfig,
  runnerConfig,
  runnerConfigDefaults,
  type Backend,
  type ConfigSources,
  type RunnerConfig,
  type RunnerConfigInput
} from './config.ts'
export {
  ConfigError,
  RUNNER_ERRORS,
  RunnerError,
  SessionError,
  type RunnerErrorCode,
  type SessionErrorCode
} from './errors.ts'
export { silentLogger, type LogFn, type Logger } from './logger.ts'
export { listenRunner, main as runnerMain, type RunnerServer } from './main.ts'
export {
  Pool,
  type PoolEvents,
  type PoolOptions,
  type PoolState,
  type PoolStats,
  type ReplaceReason
} from './pool/pool.ts'
export { JobQueue, type JobQueueOptions, type Ticket } from './pool/queue.ts'
export {
  AUTO_ORDER,
  DRIVER_FACTORIES,
  LANGUAGE_DRIVERS,
  chooseAutoDriver,
  choosePythonDriver,
  createDriver,
  hasDriver,
  registerDriver,
  type DriverChoice,
  type DriverFactory,
  type RunnerDriverOptions
} from './runner/driver-registry.ts'
export type {
  Driver,
  DriverName,
  DriverOptions,
  ExecutorCommand,
  IsolationReport,
  Job,
  PooledJob,
  RunOutcome,
  Sandbox,
  SandboxState,
  SandboxStats
} from './sandbox/contract.ts'
export { SANDBOX_PATH } from './backends/process/process-driver.ts'
export { PYTHON_IMAGE_DIR, SHIPPED_EXECUTOR, SHIPPED_SESSION_HOST } from './kits/executor/python-image.ts'
export {
  SessionHost,
  unsandboxedSessionHost,
  type SessionHostCommand,
  type SessionHostOptions
} from './sessions/session-host.ts'
export { CompileCache, compileKeyOf, type CompileCacheStats, type CompileKey } from './judge/compile-cache.ts'
