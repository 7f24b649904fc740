import { test } from 'node:test'
import assert from 'node:assert/strict'
import { base64Problem, fileFieldsProblem, filePathProblem } from '../src/request-fields.ts'

const b64 = (text: string): string => Buffer.from(text).toString('base64')

test('base64 as every encoder writes it passes; line breaks are skipped', () => {
  for (const text of ['', 'a', 'ab', 'abc', 'hello world!', '\u00ff\u0000binary'])
    assert.equal(base64Problem(b64(text)), undefined, text)
  assert.equal(base64Problem(Buffer.from([0xfb, 0xff, 0xbf]).toString('base64')), undefined) // + and /
  const wrapped = b64('x'.repeat(100)).replace(/(.{76})/g, '$1\n') + '\n'
  assert.equal(base64Problem(wrapped), undefined)
})

test("text that is not base64 is refused, saying why (what Python's decoder called 'Incorrect padding')", () => {
  assert.match(base64Problem('hello world!') ?? '', /" " at character 5, outside base64's alphabet/)
  assert.match(base64Problem('aGVsbG8') ?? '', /not a multiple of 4/)
  assert.match(base64Problem('aG=sbG8=') ?? '', /'=' before its end/)
  assert.match(base64Problem(Buffer.from([0xfb, 0xff, 0xbf]).toString('base64url')) ?? '', /outside base64's alphabet/)
  assert.match(base64Problem('====') ?? '', /'=' before its end/)
})

test('a file path names a writable place: relative inside the working directory, or absolute in /tmp, /mnt, /dev/shm', () => {
  for (const ok of [
    'a.txt',
    'in/a.txt',
    './a',
    'x/../y',
    '/tmp/a',
    '/mnt/c/d.txt',
    '/dev/shm/e',
    '/tmp/work/f',
    '/../tmp/g'
  ])
    assert.equal(filePathProblem(ok), undefined, ok)
  for (const bad of [
    '../x',
    'a/../../x',
    '.',
    'x/..',
    '/etc/x',
    '/usr/lib/x',
    '/tmp',
    '/tmp/',
    '/tmp/../etc/x',
    'dir/'
  ])
    assert.notEqual(filePathProblem(bad), undefined, bad)
  assert.match(filePathProblem('a\0b') ?? '', /NUL/)
  assert.match(filePathProblem('/etc/x') ?? '', /outside the sandbox's writable places/)
  assert.match(
    filePathProblem('../../etc/x') ?? '',
    /outside the sandbox's writable places: it leaves the working directory/
  )
})

test('the first field the fleet cannot decode is named by its path in the request', () => {
  assert.equal(fileFieldsProblem({}), undefined)
  assert.equal(fileFieldsProblem({ files: { 'a.txt': b64('hi'), '/tmp/b': '' } }), undefined)
  assert.deepEqual(fileFieldsProblem({ files: { 'ok.txt': b64('x'), 'a.txt': 'hello world!' } }), {
    field: 'files/a.txt',
    message: `files: the content of "a.txt" is not base64: it holds " " at character 5, outside base64's alphabet`
  })
  const outside = fileFieldsProblem({ files: { '/etc/x': b64('x') } })
  assert.equal(outside?.field, 'files//etc/x')
  assert.match(outside?.message ?? '', /^files: the path "\/etc\/x" is outside/)
  // a value of another type is the schema's to refuse
  assert.equal(fileFieldsProblem({ files: { 'a.txt': 3 } }), undefined)
  assert.equal(fileFieldsProblem({ files: 'x' }), undefined)
})

test('a large file is checked in one pass', () => {
  const big = Buffer.alloc(24 << 20, 7).toString('base64')
  assert.equal(base64Problem(big), undefined)
  assert.match(base64Problem(big + '!') ?? '', /outside base64's alphabet/)
})
