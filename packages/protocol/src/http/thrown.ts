/** What a thrown value says, for logs, results and answers. */

/**
 * The message of any thrown value, never a stack trace: an Error's message (one of another realm
 * too: an object with a string `message`), anything else as a string.
 */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message
  const message = (err as { message?: unknown } | null | undefined)?.message
  return typeof message === 'string' ? message : String(err)
}
