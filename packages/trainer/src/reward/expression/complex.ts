/**
 * Complex floating-point arithmetic for the answer checker. A value whose imaginary part is
 * exactly 0 is real, and every operation on reals stays on `Math`'s real functions (so
 * infinities behave as reals do); a real function outside its real domain (`\sqrt{-4}`,
 * `\ln(-1)`, `\arcsin 2`) gives the principal complex value.
 */

/** A complex number; `im === 0` is a real. */
export interface Complex {
  readonly re: number
  readonly im: number
}

/** The complex number `re + im·i`. */
export function complex(re: number, im = 0): Complex {
  return { re, im }
}

/** Not a number: the value of anything undefined (`0/0`, a function outside its domain). */
export const NAN: Complex = complex(Number.NaN, Number.NaN)

/** The imaginary unit. */
export const I: Complex = complex(0, 1)

/** True when either part is NaN. */
export function isNaNValue(z: Complex): boolean {
  return Number.isNaN(z.re) || Number.isNaN(z.im)
}

const isReal = (z: Complex): boolean => z.im === 0

/** `a + b`. */
export function add(a: Complex, b: Complex): Complex {
  return complex(a.re + b.re, a.im + b.im)
}

/** `a − b`. */
export function sub(a: Complex, b: Complex): Complex {
  return complex(a.re - b.re, a.im - b.im)
}

/** `−a`. */
export function neg(a: Complex): Complex {
  return complex(-a.re, a.im === 0 ? 0 : -a.im)
}

/** `a · b`. */
export function mul(a: Complex, b: Complex): Complex {
  if (isReal(a) && isReal(b)) return complex(a.re * b.re)
  return complex(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/** `a / b`; division by zero is NaN (undefined, not infinite). */
export function div(a: Complex, b: Complex): Complex {
  if (b.re === 0 && b.im === 0) return NAN
  if (isReal(a) && isReal(b)) return complex(a.re / b.re)
  const d = b.re * b.re + b.im * b.im
  return complex((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d)
}

/** `|z|`. */
export function abs(z: Complex): number {
  return isReal(z) ? Math.abs(z.re) : Math.hypot(z.re, z.im)
}

/** `e^z`. */
export function exp(z: Complex): Complex {
  if (isReal(z)) return complex(Math.exp(z.re))
  const r = Math.exp(z.re)
  return complex(r * Math.cos(z.im), r * Math.sin(z.im))
}

/** The principal natural logarithm; `ln 0` is NaN. */
export function log(z: Complex): Complex {
  if (z.re === 0 && z.im === 0) return NAN
  if (isReal(z) && z.re > 0) return complex(Math.log(z.re))
  return complex(Math.log(abs(z)), Math.atan2(z.im, z.re))
}

/** The principal square root. */
export function sqrt(z: Complex): Complex {
  if (isReal(z)) return z.re >= 0 ? complex(Math.sqrt(z.re)) : complex(0, Math.sqrt(-z.re))
  const r = abs(z)
  const re = Math.sqrt((r + z.re) / 2)
  const im = Math.sqrt((r - z.re) / 2)
  return complex(re, z.im < 0 ? -im : im)
}

/**
 * `a^b`: exact for integer powers of reals, the real root for odd roots of negative reals (`(-8)^{1/3}` is −2),
 * principal otherwise.
 */
export function pow(a: Complex, b: Complex): Complex {
  if (isReal(a) && isReal(b)) {
    if (a.re >= 0 || Number.isInteger(b.re) || !Number.isFinite(b.re)) return complex(Math.pow(a.re, b.re))
    const q = 1 / b.re // an odd root (b = 1/3, 1/5, …) of a negative real is real
    if (Number.isInteger(Math.round(q)) && Math.abs(q - Math.round(q)) < 1e-12 && Math.round(q) % 2 !== 0)
      return complex(-Math.pow(-a.re, b.re))
  }
  if (isReal(b) && Number.isInteger(b.re) && Math.abs(b.re) <= 64) {
    let result = complex(1)
    for (let k = 0; k < Math.abs(b.re); k++) result = mul(result, a)
    return b.re < 0 ? div(complex(1), result) : result
  }
  if (a.re === 0 && a.im === 0) return b.re > 0 ? complex(0) : NAN
  return exp(mul(b, log(a)))
}

/** The real `n`-th root of a real for odd `n` (`\sqrt[3]{-8}` is −2), `x^{1/n}` otherwise. */
export function root(x: Complex, n: Complex): Complex {
  if (isReal(x) && isReal(n) && x.re < 0 && Number.isInteger(n.re) && n.re % 2 !== 0)
    return complex(-Math.pow(-x.re, 1 / n.re))
  return pow(x, div(complex(1), n))
}

/** `sin z`. */
export function sin(z: Complex): Complex {
  if (isReal(z)) return complex(Math.sin(z.re))
  return complex(Math.sin(z.re) * Math.cosh(z.im), Math.cos(z.re) * Math.sinh(z.im))
}

/** `cos z`. */
export function cos(z: Complex): Complex {
  if (isReal(z)) return complex(Math.cos(z.re))
  return complex(Math.cos(z.re) * Math.cosh(z.im), -Math.sin(z.re) * Math.sinh(z.im))
}

/** `tan z`. */
export function tan(z: Complex): Complex {
  return isReal(z) ? complex(Math.tan(z.re)) : div(sin(z), cos(z))
}

/** `sinh z`. */
export function sinh(z: Complex): Complex {
  return isReal(z) ? complex(Math.sinh(z.re)) : mul(complex(0.5), sub(exp(z), exp(neg(z))))
}

/** `cosh z`. */
export function cosh(z: Complex): Complex {
  return isReal(z) ? complex(Math.cosh(z.re)) : mul(complex(0.5), add(exp(z), exp(neg(z))))
}

/** `tanh z`. */
export function tanh(z: Complex): Complex {
  return isReal(z) ? complex(Math.tanh(z.re)) : div(sinh(z), cosh(z))
}

/** The principal `arcsin z`: −i·ln(iz + √(1 − z²)). */
export function asin(z: Complex): Complex {
  if (isReal(z) && Math.abs(z.re) <= 1) return complex(Math.asin(z.re))
  return mul(complex(0, -1), log(add(mul(I, z), sqrt(sub(complex(1), mul(z, z))))))
}

/** The principal `arccos z`: π/2 − arcsin z. */
export function acos(z: Complex): Complex {
  if (isReal(z) && Math.abs(z.re) <= 1) return complex(Math.acos(z.re))
  return sub(complex(Math.PI / 2), asin(z))
}

/** The principal `arctan z`: (i/2)·ln((i + z)/(i − z)). */
export function atan(z: Complex): Complex {
  if (isReal(z)) return complex(Math.atan(z.re))
  return mul(complex(0, 0.5), log(div(add(I, z), sub(I, z))))
}
