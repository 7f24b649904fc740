import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as C from '../../../src/reward/expression/complex.ts'

const near = (z: C.Complex, re: number, im: number): void => {
  assert.ok(Math.abs(z.re - re) < 1e-12 && Math.abs(z.im - im) < 1e-12, `${z.re} + ${z.im}i is not ${re} + ${im}i`)
}

test('reals stay real, infinities included; division by zero is undefined', () => {
  assert.deepEqual(C.mul(C.complex(2), C.complex(Number.POSITIVE_INFINITY)), C.complex(Number.POSITIVE_INFINITY))
  assert.deepEqual(C.pow(C.complex(-2), C.complex(3)), C.complex(-8))
  assert.ok(C.isNaNValue(C.div(C.complex(1), C.complex(0))))
  assert.ok(C.isNaNValue(C.log(C.complex(0))))
})

test('outside a real domain: the principal complex value; odd roots of negatives are real', () => {
  near(C.sqrt(C.complex(-4)), 0, 2)
  near(C.log(C.complex(-1)), 0, Math.PI)
  near(C.exp(C.complex(0, Math.PI)), -1, 0)
  near(C.sin(C.asin(C.complex(2))), 2, 0)
  near(C.pow(C.complex(-8), C.complex(1 / 3)), -2, 0)
  near(C.root(C.complex(-32), C.complex(5)), -2, 0)
  near(C.pow(C.complex(-4), C.complex(0.5)), 0, 2)
})

test('integer powers of complex numbers are products', () => {
  assert.deepEqual(C.pow(C.complex(1, 1), C.complex(2)), C.complex(0, 2))
  near(C.pow(C.I, C.complex(-1)), 0, -1)
  near(C.div(C.complex(1, 1), C.complex(1, -1)), 0, 1)
  near(C.atan(C.complex(0, 0.5)), 0, Math.atanh(0.5))
})
