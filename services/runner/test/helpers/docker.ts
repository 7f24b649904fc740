/** Shared by the docker driver's tests. */
import { fileURLToPath } from 'node:url'

/**
 * This checkout's executor, bound over the image's: the image on a shared engine may have been
 * built from another branch, and the tests are of this branch's executor.
 */
export const REPO_EXECUTOR = fileURLToPath(new URL('../../../../sandbox-images/python/executor.py', import.meta.url))
