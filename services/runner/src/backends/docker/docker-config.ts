/** The docker backend's settings in the runner's configuration (config.ts composes them): their schema and defaults. */
import { Type } from '@sinclair/typebox'
import type { IsolationLevel } from '@sandfleet/protocol'

/** Schema of the docker backend's settings. */
export const DOCKER_SETTINGS = {
  dockerImage: Type.String({
    minLength: 1,
    description: 'Image of the docker backend (sandbox-images/python builds sandfleet/python:1)'
  }),
  dockerChannel: Type.Union([Type.Literal('auto'), Type.Literal('socket'), Type.Literal('attach')], {
    description:
      "How the docker backend talks to each container's executor: socket (a Unix socket of the runner bound into the container; frames skip dockerd), attach (the attached stdin/stdout, through the engine: for a remote engine), auto (socket unless DOCKER_HOST names a remote engine)"
  }),
  dockerSpares: Type.Integer({
    minimum: 0,
    maximum: 64,
    description:
      'Warm spare containers the docker backend boots ahead of need and hands to the next sandbox that starts (a replacement without a boot)'
  })
}

/** What the docker driver reads of the runner's configuration (these keys, and the shared ones config.ts defines). */
export interface DockerSettings {
  readonly id: string
  readonly dockerImage: string
  readonly dockerChannel: 'auto' | 'socket' | 'attach'
  readonly dockerSpares: number
  readonly executorPath: string
  readonly maxJobsPerSandbox: number
  readonly isolation: IsolationLevel
  readonly sandboxMemoryMb: number
  readonly sandboxPids: number
}

/** Their defaults. */
export const DOCKER_DEFAULTS = { dockerImage: 'sandfleet/python:1', dockerChannel: 'auto' as const, dockerSpares: 1 }
