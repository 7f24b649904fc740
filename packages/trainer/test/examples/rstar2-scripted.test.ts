import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ExecRequest, ExecResult } from '@sandfleet/protocol'
import { ROLLOUT_PRESETS, type TrajectoryRecord } from '@sandfleet/trainer'
import { runRstar2Example } from '../../examples/rstar2-scripted.ts'

const ok = (stdout: string): ExecResult => ({
  status: 'ok',
  stdout,
  stderr: '',
  exit_code: 0,
  duration_ms: 1,
  queue_ms: 0,
  truncated: { stdout: false, stderr: false },
  error: null,
  files: {},
  runner: 'fake',
  sandbox: 'fake-0'
})

test("the README's rStar2 example: the preset end to end against the scripted engine, 32 → 16 per problem, tensors read by python3", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-rstar2-'))
  const ran: ExecRequest[] = []
  try {
    const run = await runRstar2Example(dir, {
      problems: 1,
      behavior: (req) => {
        ran.push(req)
        return ok(`${Number(req.stdin) ** 2}\n`)
      }
    })
    const { summary } = run
    assert.equal(summary.rollouts, 32)
    assert.equal(summary.kept, 16, 'RoC keeps 16 of 32')
    assert.equal(summary.accuracy, 0.75)
    assert.equal(summary.groups_dropped, 0)
    assert.equal(summary.tool_error_ratio, 0)
    assert.deepEqual(summary.stop_reasons, { answer: 32 })
    assert.deepEqual(
      new Set(ran.map((r) => r.stdin)),
      new Set(['12']),
      'the call\'s "input" is the code\'s standard input'
    )

    const preset = ROLLOUT_PRESETS.rstar2
    const chat = run.engineLog.find((e) => e.path === '/tokenize' && Array.isArray(e.body?.messages))?.body as {
      messages: Array<{ role: string; content: string }>
      tools: Array<{ function: { name: string } }>
    }
    assert.deepEqual(
      chat.tools.map((t) => t.function.name),
      ['python_code_with_standard_io'],
      'the tool schema goes to the chat template'
    )
    assert.deepEqual(chat.messages[0], { role: 'system', content: preset.system })
    assert.equal(chat.messages[1].content, preset.userTemplate.replace('{problem}', 'What is 12 squared?'))
    assert.ok(
      run.engineLog.some((e) => e.path === '/tokenize' && e.body?.prompt === '<reason>'),
      'the first turn starts after <reason>'
    )
    const generate = run.engineLog
      .filter((e) => e.path === '/v1/completions')
      .map((e) => e.body as { stop: string[]; max_tokens: number })
    assert.ok(generate.length > 0 && generate.every((b) => b.stop.includes('</tool_call>') && b.max_tokens <= 8192))

    const records = readFileSync(join(dir, 'rollouts.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TrajectoryRecord)
    assert.equal(records.length, 16)
    assert.equal(records.filter((r) => r.reward === 1).length, 12, "the positives' share: round(24 · 16 / 32)")
    // 12 ones and 4 zeros: mean 0.75, unbiased std sqrt(0.2)
    assert.deepEqual(
      [...new Set(records.map((r) => Math.round((r.advantage as number) * 1e3) / 1e3))].sort(),
      [-1.677, 0.559]
    )
    assert.match(
      run.tensors,
      /^16 rollouts, prompts padded to \d+, responses to \d+; \d+ policy tokens; mean score 0\.750/
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
