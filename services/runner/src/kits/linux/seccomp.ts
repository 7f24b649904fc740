/**
 * The seccomp filter of the process backend's sandboxes: a classic BPF program, in the form
 * bubblewrap's `--seccomp FD` loads, that answers EPERM to the system calls code in a sandbox has
 * no use for and that widen the kernel's attack surface (kernel keyrings, BPF, perf events,
 * userfaultfd, io_uring, mounts and namespaces, module loading, another process's memory), and
 * kills a process that makes a system call through another architecture's entry (i386's
 * `int 0x80` on x86-64, x32). Everything else is allowed: the rest of the boundary is the
 * namespaces, no capabilities, uid 65534 and the cgroups.
 */

/**
 * The denied calls, by name (the same names as in the kernel's unistd headers, `__NR_<name>`),
 * with their numbers on x86-64 and on arm64 (one number: the call exists on x86-64 alone).
 * Linux's numbers: arch/x86/entry/syscalls/syscall_64.tbl; include/uapi/asm-generic/unistd.h for arm64.
 */
const DENIED = {
  acct: [163, 89],
  add_key: [248, 217],
  bpf: [321, 280],
  clock_adjtime: [305, 266],
  clock_settime: [227, 112],
  delete_module: [176, 106],
  fanotify_init: [300, 262],
  finit_module: [313, 273],
  fsconfig: [431, 431],
  fsmount: [432, 432],
  fsopen: [430, 430],
  fspick: [433, 433],
  init_module: [175, 105],
  io_uring_enter: [426, 426],
  io_uring_register: [427, 427],
  io_uring_setup: [425, 425],
  kcmp: [312, 272],
  kexec_file_load: [320, 294],
  kexec_load: [246, 104],
  keyctl: [250, 219],
  lookup_dcookie: [212, 18],
  mount: [165, 40],
  mount_setattr: [442, 442],
  move_mount: [429, 429],
  move_pages: [279, 239],
  name_to_handle_at: [303, 264],
  nfsservctl: [180, 42],
  open_by_handle_at: [304, 265],
  open_tree: [428, 428],
  perf_event_open: [298, 241],
  pidfd_getfd: [438, 438],
  pivot_root: [155, 41],
  process_vm_readv: [310, 270],
  process_vm_writev: [311, 271],
  ptrace: [101, 117],
  quotactl: [179, 60],
  reboot: [169, 142],
  request_key: [249, 218],
  setns: [308, 268],
  settimeofday: [164, 170],
  swapoff: [168, 225],
  swapon: [167, 224],
  syslog: [103, 116],
  umount2: [166, 39],
  unshare: [272, 97],
  userfaultfd: [323, 282],
  vhangup: [153, 58],
  create_module: [174],
  get_kernel_syms: [177],
  ioperm: [173],
  iopl: [172],
  query_module: [178],
  sysfs: [139],
  _sysctl: [156],
  uselib: [134],
  ustat: [136]
} as const satisfies Record<string, readonly [number, number?]>

type Name = keyof typeof DENIED

/** The denied calls, by name. */
export const DENIED_SYSCALLS = Object.freeze(Object.keys(DENIED)) as readonly Name[]

/** A CPU architecture's system call numbers of {@link DENIED_SYSCALLS} and its audit id. */
export interface SyscallTable {
  /** AUDIT_ARCH_* of the architecture, as the kernel reports it to a filter. */
  auditArch: number
  /** Numbers at and above it are another ABI sharing the entry (x32 on x86-64). */
  abiLimit?: number
  numbers: Partial<Record<Name, number>>
}

/** The numbers of {@link DENIED} in `column` (0: x86-64, 1: arm64), of the calls that exist there. */
function numbersOf(column: 0 | 1): Partial<Record<Name, number>> {
  const numbers: Partial<Record<Name, number>> = {}
  for (const name of DENIED_SYSCALLS) {
    const nr = (DENIED[name] as readonly number[])[column]
    if (nr !== undefined) numbers[name] = nr
  }
  return numbers
}

/** The tables of the architectures the runner knows, by Node's `process.arch`. */
export const SYSCALL_TABLES: Readonly<Record<string, SyscallTable>> = {
  x64: { auditArch: 0xc000003e, abiLimit: 0x40000000, numbers: numbersOf(0) },
  arm64: { auditArch: 0xc00000b7, numbers: numbersOf(1) }
}

// Classic BPF, as seccomp runs it over struct seccomp_data { int nr; __u32 arch; ... }.
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGE_K = 0x35
const RET_K = 0x06
const SECCOMP_RET_KILL_PROCESS = 0x80000000
const SECCOMP_RET_ERRNO = 0x00050000
const SECCOMP_RET_ALLOW = 0x7fff0000
const EPERM = 1

/**
 * The filter for `table` (`SYSCALL_TABLES[process.arch]` for this machine), as bubblewrap reads it: an
 * array of struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}, in the host's byte order (little
 * endian on both tables' CPUs), denying all of the table's calls but `allowed`. Undefined for an
 * architecture without a table.
 */
export function seccompFilter(table: SyscallTable | undefined, allowed: readonly Name[] = []): Buffer | undefined {
  if (table === undefined) return undefined
  const denied = Object.entries(table.numbers)
    .filter(([name]) => !allowed.includes(name as Name))
    .map(([, nr]) => nr)
  const numbers = [...new Set(denied)].sort((a, b) => a - b)
  const program: Array<[number, number, number, number]> = []
  // Jumps are relative to the next instruction; `deny` is the last one, `allow` the one before it.
  const toDeny = (): number => numbers.length + (table.abiLimit === undefined ? 0 : 1) - program.length + 4
  program.push([LD_W_ABS, 0, 0, 4]) // arch
  program.push([JEQ_K, 1, 0, table.auditArch])
  program.push([RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS])
  program.push([LD_W_ABS, 0, 0, 0]) // nr
  if (table.abiLimit !== undefined) program.push([JGE_K, toDeny(), 0, table.abiLimit])
  for (const nr of numbers) program.push([JEQ_K, toDeny(), 0, nr])
  program.push([RET_K, 0, 0, SECCOMP_RET_ALLOW])
  program.push([RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM])
  const out = Buffer.alloc(program.length * 8)
  program.forEach(([code, jt, jf, k], i) => {
    if (jt > 255) throw new Error('seccomp filter: a jump is out of range')
    out.writeUInt16LE(code, i * 8)
    out.writeUInt8(jt, i * 8 + 2)
    out.writeUInt8(jf, i * 8 + 3)
    out.writeUInt32LE(k >>> 0, i * 8 + 4)
  })
  return out
}
