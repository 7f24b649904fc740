/**
 * The pyodide backend's settings in the runner's configuration (config.ts composes them): their schema and defaults.
 */
import { Type } from '@sinclair/typebox'

/** Schema of the pyodide backend's settings. */
export const PYODIDE_SETTINGS = {
  pyodidePackages: Type.String({
    description:
      "A zip of pure-Python packages (.py, or .pyc of CPython 3.13) put on the pyodide sandboxes' sys.path (empty: the stdlib only); e.g. sympy and mpmath zipped from Debian's python3-sympy"
  }),
  pyodidePreimport: Type.Array(Type.String({ minLength: 1 }), {
    description:
      'Modules imported into the pyodide memory image (free for every job, e.g. sympy); made once, then cached'
  }),
  pyodideWarmup: Type.String({
    description:
      'Python run into the pyodide memory image after pyodidePreimport, e.g. a sympy.factor call so lazy imports and caches are warm for every job'
  })
}

/** What the pyodide driver reads of the runner's configuration. */
export interface PyodideSettings {
  readonly id: string
  readonly poolSize: number
  readonly maxMemoryMb: number
  readonly sandboxMemoryMb: number
  readonly pyodidePackages: string
  readonly pyodidePreimport: readonly string[]
  readonly pyodideWarmup: string
}

/** Their defaults. */
export const PYODIDE_DEFAULTS = { pyodidePackages: '', pyodidePreimport: [] as string[], pyodideWarmup: '' }
