/**
 * Where the runner finds the Python sandbox image's programs: `sandbox-images/python/` at the
 * repository root, the one place this path is written. Each program is one file, built from the
 * package `sandfleet_sandbox/` beside it by `build.py` (and checked by python-package.test.ts). The process and unsafe
 * backends run these files; the docker backend's image holds its own copies (built from the same directory)
 * and binds these over them only when `executorPath` is set.
 */
import { fileURLToPath } from 'node:url'

/** The directory `sandbox-images/python/` (with a trailing slash). */
export const PYTHON_IMAGE_DIR = fileURLToPath(new URL('../../../../../sandbox-images/python/', import.meta.url))

/** `executor.py`: runs one job at a time from warm zygotes (docs/executor-protocol.md). */
export const SHIPPED_EXECUTOR = `${PYTHON_IMAGE_DIR}executor.py`

/** `session_host.py`: holds stateful sessions, a process each. */
export const SHIPPED_SESSION_HOST = `${PYTHON_IMAGE_DIR}session_host.py`

/** `manifest.py`: prints the sandbox's Python version, base system and importable distributions (manifest-probe.ts). */
export const SHIPPED_MANIFEST_PROBE = `${PYTHON_IMAGE_DIR}manifest.py`
