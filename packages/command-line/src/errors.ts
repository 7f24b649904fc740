/** The errors of the command-line kit (docs/errors.md, "Command line"). */

/** Bad arguments: every problem, one a line. */
export class CommandLineError extends Error {
  readonly code = 'SF_ERR_COMMAND_LINE'
  constructor(readonly problems: readonly string[]) {
    super(problems.length === 1 ? problems[0] : `bad arguments:\n  - ${problems.join('\n  - ')}`)
    this.name = 'CommandLineError'
  }
}
