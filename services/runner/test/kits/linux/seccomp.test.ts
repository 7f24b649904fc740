import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { DENIED_SYSCALLS, SYSCALL_TABLES, seccompFilter, type SyscallTable } from '../../../src/kits/linux/seccomp.ts'

/** Runs a classic BPF seccomp program over one system call, as the kernel would: its return value. */
function evaluate(program: Buffer, arch: number, nr: number): number {
  const data = [nr >>> 0, arch >>> 0] // struct seccomp_data: nr at offset 0, arch at 4
  let acc = 0
  for (let pc = 0; pc * 8 < program.length;) {
    const code = program.readUInt16LE(pc * 8)
    const jt = program.readUInt8(pc * 8 + 2)
    const jf = program.readUInt8(pc * 8 + 3)
    const k = program.readUInt32LE(pc * 8 + 4)
    pc++
    if (code === 0x20) acc = data[k / 4]
    else if (code === 0x15) pc += acc === k ? jt : jf
    else if (code === 0x35) pc += acc >= k ? jt : jf
    else if (code === 0x06) return k
    else throw new Error(`unexpected instruction ${code.toString(16)}`)
  }
  throw new Error('the program ran off its end')
}

const ALLOW = 0x7fff0000
const EPERM = 0x00050001
const KILL = 0x80000000

/** `#define __NR_name N` lines of a kernel unistd header. */
function headerNumbers(path: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const m of readFileSync(path, 'utf8').matchAll(/^#define __NR_(\w+)\s+(\d+)\s*$/gm)) out.set(m[1], Number(m[2]))
  return out
}

test("the syscall tables are the kernel headers' numbers (x86-64 from asm/unistd_64.h, arm64 from asm-generic/unistd.h)", () => {
  for (const [table, header] of [
    [SYSCALL_TABLES.x64, '/usr/include/x86_64-linux-gnu/asm/unistd_64.h'],
    [SYSCALL_TABLES.arm64, '/usr/include/asm-generic/unistd.h']
  ] as Array<[SyscallTable, string]>) {
    const numbers = headerNumbers(header)
    for (const [name, nr] of Object.entries(table.numbers)) assert.equal(nr, numbers.get(name), `${name} in ${header}`)
    // every denied call the architecture has is in its table
    for (const name of DENIED_SYSCALLS)
      if (numbers.has(name)) assert.ok(name in table.numbers, `${name} is missing from the table for ${header}`)
  }
})

test('the filter denies exactly the listed calls with EPERM, allows the rest, and kills other ABIs', () => {
  for (const table of Object.values(SYSCALL_TABLES)) {
    const program = seccompFilter(table)
    assert.ok(program !== undefined)
    const denied = new Set(Object.values(table.numbers))
    for (let nr = 0; nr < 512; nr++) {
      assert.equal(evaluate(program, table.auditArch, nr), denied.has(nr) ? EPERM : ALLOW, `call ${nr}`)
    }
    assert.equal(evaluate(program, 0x40000003, 20), KILL, 'i386 getpid through int 0x80')
    if (table.abiLimit !== undefined)
      assert.equal(evaluate(program, table.auditArch, table.abiLimit + 39), EPERM, 'an x32 call')
  }
  assert.equal(seccompFilter(undefined), undefined, 'no filter on a CPU without a table')
  const x64 = SYSCALL_TABLES.x64
  const sessions = seccompFilter(x64, ['unshare', 'mount']) as Buffer
  assert.deepEqual(
    [x64.numbers.unshare, x64.numbers.mount, x64.numbers.bpf, x64.numbers.umount2].map((nr) =>
      evaluate(sessions, x64.auditArch, nr ?? -1)
    ),
    [ALLOW, ALLOW, EPERM, EPERM],
    "the session host's filter allows what makes its namespaces"
  )
})
