import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ConnectError, envelope, unenvelope } from '../../../src/apis/e2b/connect-rpc.ts'
import { boundaryOf, parseForm } from '../../../src/apis/e2b/multipart.ts'

test('a multipart form is read into its parts, binary bytes as they were', () => {
  const bytes = Buffer.from([0, 13, 10, 45, 45, 255])
  const body = Buffer.concat([
    Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="file"; filename="/home/user/a.bin"\r\n'),
    Buffer.from('Content-Type: application/octet-stream\r\n\r\n'),
    bytes,
    Buffer.from('\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="b.txt"\r\n\r\nhi\r\n--XyZ--\r\n')
  ])
  assert.equal(boundaryOf('multipart/form-data; boundary=XyZ'), 'XyZ')
  assert.equal(boundaryOf('multipart/form-data; boundary="a b"'), 'a b')
  const parts = parseForm(body, 'XyZ')
  assert.deepEqual(
    parts.map((p) => [p.name, p.filename, p.data.toString('hex')]),
    [
      ['file', '/home/user/a.bin', bytes.toString('hex')],
      ['file', 'b.txt', Buffer.from('hi').toString('hex')]
    ]
  )
  assert.throws(() => parseForm(Buffer.from('no parts here'), 'XyZ'))
})

test('a Connect envelope: flags, a big-endian length, the JSON; compressed or cut short refused', () => {
  const one = envelope({ event: { start: { pid: 7 } } })
  assert.equal(one[0], 0)
  assert.equal(one.readUInt32BE(1), one.length - 5)
  assert.deepEqual(unenvelope(one), { event: { start: { pid: 7 } } })
  assert.equal(envelope({}, true)[0], 2, 'the end of a stream')
  const compressed = Buffer.from(one)
  compressed[0] = 1
  assert.throws(
    () => unenvelope(compressed),
    (e: ConnectError) => e.code === 'unimplemented'
  )
  assert.throws(
    () => unenvelope(one.subarray(0, 8)),
    (e: ConnectError) => e.code === 'invalid_argument'
  )
  assert.equal(new ConnectError('not_found', 'x').httpStatus, 404)
})
