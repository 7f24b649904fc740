/**
 * NumPy's file formats, written without NumPy: `.npy` (format version 1.0: a magic string, a
 * Python-literal header naming dtype and shape, then the array's bytes in C order) and `.npz` (a
 * ZIP archive of `.npy` entries, stored uncompressed). `numpy.load` reads both.
 */
import { crc32 } from 'node:zlib'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'

/** One array: its little-endian dtype, its shape (C order) and its elements. */
export type NpyArray =
  | { dtype: '<i4'; shape: readonly number[]; data: Int32Array }
  | { dtype: '|i1'; shape: readonly number[]; data: Int8Array }
  | { dtype: '<f4'; shape: readonly number[]; data: Float32Array }

/** The bytes of one `.npy` file. */
export function npyBytes(a: NpyArray): Buffer {
  const count = a.shape.reduce((x, y) => x * y, 1)
  if (count !== a.data.length)
    throw new TrainerError(
      TRAINER_ERROR_CODES.BAD_INPUT,
      `an array of shape (${a.shape.join(', ')}) needs ${count} elements, got ${a.data.length}`,
      400
    )
  const shape = a.shape.length === 1 ? `(${a.shape[0]},)` : `(${a.shape.join(', ')})`
  let header = `{'descr': '${a.dtype}', 'fortran_order': False, 'shape': ${shape}, }`
  // magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64, ending in \n
  header = header.padEnd(Math.ceil((10 + header.length + 1) / 64) * 64 - 10 - 1, ' ') + '\n'
  const head = Buffer.alloc(10)
  head.write('\x93NUMPY', 0, 'latin1')
  head[6] = 1
  head[7] = 0
  head.writeUInt16LE(header.length, 8)
  // the typed arrays are in the machine's order: little-endian on every platform Node runs on
  return Buffer.concat([
    head,
    Buffer.from(header, 'latin1'),
    Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength)
  ])
}

const DOS_DATE_1980_01_01 = (0 << 9) | (1 << 5) | 1

/** The bytes of an `.npz` archive holding `arrays` (entry `name.npy` for each key), stored, no ZIP64: at most 4 GiB. */
export function npzBytes(arrays: Readonly<Record<string, NpyArray>>): Buffer {
  const locals: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const [key, array] of Object.entries(arrays)) {
    const name = Buffer.from(`${key}.npy`, 'utf8')
    const data = npyBytes(array)
    const crc = crc32(data)
    if (offset + data.length + 30 + name.length > 0xffff_ffff)
      throw new TrainerError(
        TRAINER_ERROR_CODES.BAD_INPUT,
        'the tensors pass 4 GiB, the limit of an .npz without ZIP64: write fewer rollouts per file',
        400
      )
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4) // version needed: 2.0
    local.writeUInt16LE(0, 6) // flags
    local.writeUInt16LE(0, 8) // method: stored
    local.writeUInt16LE(0, 10) // time
    local.writeUInt16LE(DOS_DATE_1980_01_01, 12)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(data.length, 18)
    local.writeUInt32LE(data.length, 22)
    local.writeUInt16LE(name.length, 26)
    local.writeUInt16LE(0, 28) // extra
    const entry = Buffer.alloc(46)
    entry.writeUInt32LE(0x02014b50, 0)
    entry.writeUInt16LE(20, 4) // made by
    entry.writeUInt16LE(20, 6) // needed
    entry.writeUInt16LE(0, 8)
    entry.writeUInt16LE(0, 10)
    entry.writeUInt16LE(0, 12)
    entry.writeUInt16LE(DOS_DATE_1980_01_01, 14)
    entry.writeUInt32LE(crc, 16)
    entry.writeUInt32LE(data.length, 20)
    entry.writeUInt32LE(data.length, 24)
    entry.writeUInt16LE(name.length, 28)
    // extra, comment, disk, internal and external attributes stay 0
    entry.writeUInt32LE(offset, 42)
    locals.push(local, name, data)
    central.push(entry, name)
    offset += 30 + name.length + data.length
  }
  const dir = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(Object.keys(arrays).length, 8)
  end.writeUInt16LE(Object.keys(arrays).length, 10)
  end.writeUInt32LE(dir.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, dir, end])
}
