/**
 * `GET /v1/info`: what a fleet runs, for a caller to record beside its results (the Python and
 * package versions a reward was computed with) and for an operator to see the isolation.
 *
 * A runner answers a {@link RunnerInfo}: its backend, what that backend's boundary protects
 * against for each language it serves, what runs each language's code (its runtime's version and
 * the packages it can import, read from the backend's sandboxes at start-up), and the Python
 * environment's manifest (the docker image's `/opt/sandfleet/manifest.json`; on the process and
 * unsafe backends what `sandbox-images/python/manifest.py` reads in a sandbox; pyodide's own). A
 * gateway answers a {@link GatewayInfo}: the info of each of its runners.
 */
import { Type, type Static } from '@sinclair/typebox'
import { LANGUAGES } from './exec.ts'
import { RUNNER_STATES } from './runner.ts'

/** Schema of {@link JudgeLanguageInfo}. */
export const JudgeLanguageInfoSchema = Type.Object(
  {
    name: Type.String({ description: 'The language, by its name in judge requests' }),
    aliases: Type.Array(Type.String()),
    title: Type.String(),
    version: Type.String({
      description:
        "Its compiler's or interpreter's version number, bare (3.11.2, 12.2.0; javascript: the runner's V8's), read from the sandbox; unknown until the runner has read it"
    }),
    precompiled_header: Type.Optional(
      Type.Boolean({
        description: 'Whether the sandbox holds its precompiled header (bits/stdc++.h), and g++ reads it'
      })
    )
  },
  { $id: 'JudgeLanguageInfo' }
)

/** A language a runner judges, with the version its sandboxes run. */
export type JudgeLanguageInfo = Static<typeof JudgeLanguageInfoSchema>

/** Schema of {@link IsolationReport}. */
export const IsolationReportSchema = Type.Object(
  {
    driver: Type.String({ description: 'The backend: process | docker | pyodide | javascript | unsafe' }),
    boundary: Type.String({ description: 'The sandbox boundary, one line' }),
    properties: Type.Array(Type.String(), {
      description: 'What the boundary does and does not protect against, one item a property'
    })
  },
  { $id: 'IsolationReport' }
)

/** What one backend protects against. */
export type IsolationReport = Static<typeof IsolationReportSchema>

/** Schema of {@link SandboxManifest}. */
export const SandboxManifestSchema = Type.Object(
  {
    image: Type.String({
      description:
        "Image name without tag, e.g. sandfleet/python; `host` on the process and unsafe backends (the host's /usr), `pyodide` on the pyodide backend"
    }),
    build: Type.String({
      description:
        "How the environment was built: dockerfile | debootstrap | host (the host's own Python) | the pyodide npm package and its version"
    }),
    os: Type.String({
      description:
        'Base system, e.g. "Debian GNU/Linux 12 (bookworm)", "python:3.12-slim" or "Emscripten (WebAssembly)"'
    }),
    python: Type.String({ description: 'Python version, e.g. 3.11.2' }),
    executor: Type.String({ description: 'Path of the program that runs the jobs inside the sandbox' }),
    packages: Type.Record(Type.String(), Type.String(), { description: 'Package → version' }),
    compilers: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: 'Compiler → version (g++, gcc): what the judge compiles C and C++ with'
      })
    ),
    image_id: Type.Optional(Type.String({ description: 'Content id of the image the manifest was read from' })),
    image_ref: Type.Optional(
      Type.String({ description: 'The image reference the runner runs, e.g. sandfleet/python:1' })
    )
  },
  { $id: 'SandboxManifest' }
)

/** The sandbox environment: Python and package versions (sandbox-images/python writes it). */
export type SandboxManifest = Static<typeof SandboxManifestSchema>

/** Schema of {@link RuntimeEnvironment}. */
export const RuntimeEnvironmentSchema = Type.Object(
  {
    runtime: Type.String({
      description: 'What runs the code: CPython, Pyodide 0.27.7 (CPython on WebAssembly), V8 (isolated-vm)'
    }),
    version: Type.String({ description: "The language's version: Python's (3.11.2), or V8's for JavaScript" }),
    packages: Type.Record(Type.String(), Type.String(), {
      description: 'Package → version: what the code can import (empty: the standard library only, or no imports)'
    })
  },
  { $id: 'RuntimeEnvironment' }
)

/** What runs one language's code on a runner: read from its backend's sandboxes at start-up. */
export type RuntimeEnvironment = Static<typeof RuntimeEnvironmentSchema>

/** Schema of {@link RunnerInfo}. */
export const RunnerInfoSchema = Type.Object(
  {
    runner: Type.String({ description: "The runner's id" }),
    state: Type.Union(RUNNER_STATES.map((s) => Type.Literal(s))),
    backend: Type.String({ description: 'Driver of its Python pool' }),
    backend_reason: Type.String({ description: 'Why that backend (configured, or what `auto` refused)' }),
    languages: Type.Array(Type.Union(LANGUAGES.map((l) => Type.Literal(l)))),
    pool_size: Type.Integer({ description: 'Sandboxes per language' }),
    isolation: Type.Record(Type.String(), IsolationReportSchema, {
      description: 'Language → what its backend protects against'
    }),
    environments: Type.Record(Type.String(), RuntimeEnvironmentSchema, {
      description: "Language → what runs its code: the runtime's version and the packages the code can import"
    }),
    manifest: Type.Union([SandboxManifestSchema, Type.Null()], {
      description: 'The Python sandbox environment, null when the runner serves no Python'
    }),
    judge_languages: Type.Optional(
      Type.Array(JudgeLanguageInfoSchema, {
        description: 'The languages it judges (POST /v1/judge), each with its version as read in its sandboxes'
      })
    )
  },
  { $id: 'RunnerInfo' }
)

/** A runner's `GET /v1/info`. */
export type RunnerInfo = Static<typeof RunnerInfoSchema>

/** Schema of {@link GatewayInfo}. */
export const GatewayInfoSchema = Type.Object(
  {
    runners: Type.Array(
      Type.Object({
        member: Type.String({ description: 'The runner as the gateway knows it: its URL, or local:ID' }),
        up: Type.Boolean({ description: 'Whether it answered' }),
        info: Type.Union([RunnerInfoSchema, Type.Null()]),
        error: Type.Optional(Type.String({ description: 'Why there is no info' }))
      })
    ),
    backends: Type.Array(Type.String(), { description: 'Distinct backends of the runners that answered' }),
    pythons: Type.Array(Type.String(), {
      description: 'Distinct Python versions of the runners that answered (a mixed fleet shows more than one)'
    }),
    judge_languages: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ description: 'The language, by its name in judge requests' }),
          aliases: Type.Array(Type.String()),
          title: Type.String(),
          versions: Type.Array(Type.String(), {
            description: "Distinct versions of its compiler or interpreter in the runners' sandboxes"
          }),
          runners: Type.Integer({ minimum: 0, description: 'Runners that answered and judge it' })
        }),
        { description: 'The languages the runners that answered judge (POST /v1/judge), with their versions' }
      )
    )
  },
  { $id: 'GatewayInfo' }
)

/** A gateway's `GET /v1/info`: each runner's info. */
export type GatewayInfo = Static<typeof GatewayInfoSchema>
