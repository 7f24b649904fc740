import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  answerTagsBalanced,
  countAnswers,
  errorPenalty,
  formatPenalty,
  releasedFormatPenalty,
  statusErrorPenalty,
  substringErrorPenalty,
  TRAINER_ERROR_CODES,
  type RocRollout
} from '@sandfleet/trainer'
import { CALL, chatmlRollout, decodedChatml } from '../helpers/roc-rollouts.ts'

const r = (reward: number, toolStatuses: RocRollout['toolStatuses'], answers = 1, turns = 2): RocRollout => ({
  reward,
  toolStatuses,
  answers,
  turns
})

test('p_err by status (ours, the default): error statuses over calls; fleet faults left out', () => {
  assert.equal(errorPenalty(r(1, [])), 0.5)
  assert.equal(errorPenalty(r(1, ['ok', 'error', 'timeout', 'ok'])), 0.5)
  assert.equal(errorPenalty(r(1, ['ok', 'infra_error', 'parse_error'])), 0.5)
  assert.equal(errorPenalty(r(1, ['ok', 'ok'])), 0)
  assert.equal(errorPenalty(r(1, ['killed', 'memory'])), 1)
  assert.equal(statusErrorPenalty(r(1, ['ok', 'error'])), errorPenalty(r(1, ['ok', 'error']), 'status'))
})

test('p_err by substring (the released code): <tool_response> blocks whose lowercased text holds "error", over the blocks', () => {
  // one block each: a clean run that prints "error" counts, a kill and a timeout do not
  const printsError = chatmlRollout(1, [CALL, '<answer>\\boxed{0}</answer>'], [['ok', 'no ERROR in 42 cases']])
  const killed = chatmlRollout(1, [CALL, '<answer>\\boxed{0}</answer>'], [['killed', 'Killed: the code was killed']])
  const timedOut = chatmlRollout(
    1,
    [CALL, '<answer>\\boxed{0}</answer>'],
    [['timeout', 'Tool call failure: the run took too long']]
  )
  assert.deepEqual(
    [printsError, killed, timedOut].map((x) => errorPenalty(x, 'substring')),
    [1, 0, 0]
  )
  assert.deepEqual(
    [printsError, killed, timedOut].map((x) => errorPenalty(x, 'status')),
    [0, 1, 1]
  )
  // four blocks, two hold "error" (ZeroDivisionError; "Errors" printed by a clean run): 2/4
  const four = chatmlRollout(
    0,
    [CALL, CALL, CALL, CALL, '<answer>1</answer>'],
    [
      ['error', 'ZeroDivisionError: division by zero'],
      ['ok', '42'],
      ['ok', 'Errors: 0'],
      ['killed', 'Killed']
    ]
  )
  assert.equal(errorPenalty(four, 'substring'), 0.5)
  assert.equal(errorPenalty(four, 'status'), 0.5, 'the same ratio by status: the error and the kill')
  assert.equal(substringErrorPenalty('no tool was called <answer>1</answer>'), 0.5, 'no block: 0.5')
  assert.equal(
    substringErrorPenalty('<tool_response>a</tool_response> <tool_response>\nerror\n</tool_response> <tool_response>'),
    0.5,
    'an unclosed block is no block'
  )
  assert.throws(
    () => errorPenalty(r(1, ['ok']), 'substring'),
    (e: { code?: string }) => e.code === TRAINER_ERROR_CODES.BAD_INPUT,
    'the rule needs the response text'
  )
})

test('p_format, ours: 1 without a closed <answer> block (a \\boxed{} alone is none) or with a tag unpaired, else (answers − 1) / turns', () => {
  assert.equal(formatPenalty(r(1, [], 0, 3)), 1)
  assert.equal(formatPenalty(r(1, [], 1, 3)), 0)
  assert.equal(formatPenalty(r(1, [], 3, 4)), 0.5)
  assert.equal(formatPenalty(r(1, [], 9, 2)), 1)
  assert.equal(
    countAnswers(['I compute.', 'So \\boxed{3}.']),
    0,
    'a boxed answer without the tag is not an answer block'
  )
  assert.equal(formatPenalty(r(1, [], countAnswers(['So \\boxed{3}.']), 2)), 1)
  assert.equal(countAnswers(['<answer>\\boxed{3}</answer>']), 1)
  assert.equal(formatPenalty({ ...r(1, [], 1, 2), unbalancedAnswerTags: true }), 1, 'an <answer> left open')
  assert.equal(answerTagsBalanced(['<answer>3</answer> <answer>4']), false)
  assert.equal(answerTagsBalanced(['<answer>3</answer>', 'x']), true)
})

test('p_format, released: answer blocks over the <|im_start|>assistant … <|im_end|> spans of the decoded response', () => {
  const cases: Array<{ turns: string[]; released: number; ours: number; why: string }> = [
    // the first turn opens in the prompt: a one-turn answer has no span
    { turns: ['<answer>\\boxed{4}</answer>'], released: 1, ours: 0, why: 'one turn, one answer: no span' },
    { turns: [CALL, '<answer>\\boxed{4}</answer>'], released: 0, ours: 0, why: 'one span, one answer: (1 − 1) / 1' },
    {
      turns: ['<answer>3</answer>' + CALL, '<answer>\\boxed{4}</answer>'],
      released: 1,
      ours: 0.5,
      why: 'two answers, one span: (2 − 1) / 1; ours (2 − 1) / 2'
    },
    {
      turns: [CALL, '<answer>3</answer>' + CALL, '<answer>\\boxed{4}</answer>'],
      released: 0.5,
      ours: 1 / 3,
      why: 'two answers, two spans: 1/2; ours 1/3'
    },
    { turns: [CALL, 'So \\boxed{4}'], released: 1, ours: 1, why: 'no <answer> tag' },
    { turns: [CALL, '<answer>3</answer> <answer>\\boxed{4}'], released: 1, ours: 1, why: 'an <answer> left open' }
  ]
  for (const c of cases) {
    const x = chatmlRollout(
      1,
      c.turns,
      c.turns.slice(1).map(() => ['ok', '42'])
    )
    assert.equal(releasedFormatPenalty(x.responseText as string), c.released, c.why)
    assert.equal(formatPenalty(x), c.ours, c.why)
  }
  assert.equal(
    releasedFormatPenalty('Let me see. ```output\n4\n```\n<answer>\\boxed{4}</answer>'),
    1,
    'no ChatML turns at all (the inline template): 1'
  )
  // a last turn cut at its length limit has no <|im_end|>, so its span does not close
  assert.equal(
    releasedFormatPenalty(
      decodedChatml([CALL, CALL, '<answer>1</answer><answer>2</answer>'], ['1', '2']).slice(0, -'<|im_end|>'.length)
    ),
    1
  )
})
