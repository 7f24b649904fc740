/**
 * The E2B API's shapes on the API URL, for the API description (the routes check their input themselves, as E2B
 * does, and answer what e2b-shapes.ts builds). Field names and types are E2B's.
 */
import { Type } from '@sinclair/typebox'
import { SANDBOX_LIMITS } from '@sandfleet/protocol'
import { E2B_TEMPLATES } from './e2b-shapes.ts'

const strings = (description: string) =>
  Type.Record(Type.String(), Type.String(), { description, maxProperties: SANDBOX_LIMITS.maxLabels })

/** E2B's error body. */
export const E2bErrorSchema = Type.Object(
  {
    code: Type.Integer({ description: 'The HTTP status' }),
    message: Type.String({ description: 'What went wrong; bad input names its field' })
  },
  { title: 'E2bError', additionalProperties: false }
)

/** `POST /v2/sandboxes` body. */
export const E2bNewSandboxSchema = Type.Object(
  {
    templateID: Type.String({ description: `The template: ${E2B_TEMPLATES.join(' or ')} (the Python sandbox)` }),
    timeout: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: SANDBOX_LIMITS.maxTimeoutS,
        description: 'Seconds the sandbox lives (default 15); then it is killed'
      })
    ),
    metadata: Type.Optional(strings('Labels it is listed with')),
    envVars: Type.Optional(strings('Environment of its code and commands')),
    autoPause: Type.Optional(Type.Boolean({ description: 'Only false: sandfleet does not pause sandboxes' })),
    allow_internet_access: Type.Optional(Type.Boolean({ description: 'Only false: sandboxes have no network' })),
    secure: Type.Optional(Type.Boolean({ description: 'Ignored: every sandbox has an access token' }))
  },
  // /docs starts its form from this (a template the route takes), not from an empty templateID
  { title: 'E2bNewSandbox', examples: [{ templateID: E2B_TEMPLATES[0], timeout: 60 }] }
)

/** A sandbox made or met again: its id and the token of its sandbox URL. */
export const E2bSandboxSchema = Type.Object(
  {
    templateID: Type.String(),
    sandboxID: Type.String(),
    alias: Type.String(),
    clientID: Type.String({ description: 'The runner holding it' }),
    envdVersion: Type.String(),
    envdAccessToken: Type.String({ description: 'X-Access-Token of its sandbox URL' }),
    trafficAccessToken: Type.Null(),
    domain: Type.Null()
  },
  { title: 'E2bSandbox', additionalProperties: false }
)

const listedProperties = {
  templateID: Type.String(),
  alias: Type.String(),
  sandboxID: Type.String(),
  clientID: Type.String({ description: 'The runner holding it' }),
  startedAt: Type.String({ description: 'ISO 8601' }),
  endAt: Type.String({ description: 'ISO 8601: when it is killed' }),
  cpuCount: Type.Integer(),
  memoryMB: Type.Integer(),
  diskSizeMB: Type.Integer(),
  metadata: Type.Record(Type.String(), Type.String()),
  state: Type.Literal('running'),
  envdVersion: Type.String(),
  volumeMounts: Type.Array(Type.Object({ name: Type.String(), path: Type.String() }))
}

/** A sandbox as `GET /v2/sandboxes` lists it. */
export const E2bListedSandboxSchema = Type.Object(listedProperties, {
  title: 'E2bListedSandbox',
  additionalProperties: false
})

/** A sandbox as `GET /sandboxes/{sandboxID}` describes it. */
export const E2bSandboxDetailSchema = Type.Object(
  {
    ...listedProperties,
    envdAccessToken: Type.String(),
    domain: Type.Null(),
    allowInternetAccess: Type.Boolean(),
    lifecycle: Type.Object({ autoResume: Type.Boolean(), onTimeout: Type.Literal('kill') })
  },
  { title: 'E2bSandboxDetail', additionalProperties: false }
)

/** `POST /sandboxes/{sandboxID}/timeout` body. */
export const E2bTimeoutSchema = Type.Object(
  {
    timeout: Type.Integer({
      minimum: 0,
      maximum: SANDBOX_LIMITS.maxTimeoutS,
      description: 'Seconds from now until it is killed'
    })
  },
  { title: 'E2bTimeout' }
)

/** `POST /v2/sandboxes/{sandboxID}/connect` body. */
export const E2bConnectSchema = Type.Object(
  {
    timeout: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: SANDBOX_LIMITS.maxTimeoutS,
        description: 'Seconds from now it lives at least'
      })
    )
  },
  { title: 'E2bConnect' }
)

/** The error answers of an API URL route (besides its success). */
export const E2B_ERRORS = Object.freeze({
  '4xx': {
    description:
      'Bad input (400, naming the field), a missing or wrong API key (401), a sandbox not found or gone (404), past the quota or at the limit of sandboxes (429, with Retry-After for a quota)',
    ...E2bErrorSchema
  },
  '5xx': { description: 'The fleet could not do it (no runner: 503): retriable', ...E2bErrorSchema }
})
