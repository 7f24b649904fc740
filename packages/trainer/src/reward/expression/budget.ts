/**
 * The work limit of one answer comparison: a count of evaluation steps and a wall-clock
 * deadline, so that a hostile answer (`\sum_{n=1}^{10^{9}} …`) is stopped, deterministically by
 * its step count, or by the clock on a machine too busy to reach it.
 */

/** Thrown when a comparison has used up its {@link StepBudget}. */
export class BudgetExceededError extends Error {
  /** Builds the error; `reason` says which limit was reached. */
  constructor(reason: 'steps' | 'time') {
    super(reason === 'steps' ? 'the comparison used up its evaluation steps' : 'the comparison ran past its time limit')
    this.name = 'BudgetExceededError'
  }
}

/** How many steps pass between two looks at the clock. */
const CLOCK_EVERY = 1024

/** Steps and time one comparison may use; {@link StepBudget.step} throws {@link BudgetExceededError} past either. */
export class StepBudget {
  private used = 0
  private readonly deadline: number

  /** A budget of `maxSteps` steps and `timeLimitMs` from now. */
  constructor(
    private readonly maxSteps: number,
    timeLimitMs: number
  ) {
    this.deadline = performance.now() + timeLimitMs
  }

  /** Spends `n` steps (default 1). */
  step(n = 1): void {
    const before = this.used
    this.used += n
    if (this.used > this.maxSteps) throw new BudgetExceededError('steps')
    if (Math.floor(before / CLOCK_EVERY) !== Math.floor(this.used / CLOCK_EVERY) && performance.now() > this.deadline)
      throw new BudgetExceededError('time')
  }

  /** Throws now when `n` more steps would not fit (a loop whose length is known before it runs). */
  reserve(n: number): void {
    if (!(this.used + n <= this.maxSteps)) throw new BudgetExceededError('steps')
  }
}
