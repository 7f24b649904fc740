#!/usr/bin/env python3
# Built by sandbox-images/python/build.py from sandfleet_sandbox/: boot, libc, limits, files, tampering, seccomp, job, tiers, zygote, cleanup, controller.
# Edit those and run the build; a test fails while this file is not what the build makes of them.
"""sandfleet executor: NDJSON frames on stdin/stdout; jobs forked ahead of time from warm zygotes.

See docs/executor-protocol.md. Standard library only; CPython 3.11 and 3.12. Built from the modules
of sandbox-images/python/sandfleet_sandbox/ by build.py, this module last.
The controller (this process) owns the channel, a private dup of fd 1; fds 0/1/2 point at /dev/null
and no other process holds the channel, so nothing a job writes can reach it. Zygote processes
(`bare`: what the executor itself imports; `std`: plus the common standard library; `sym`: plus
sympy and mpmath; `sci`: plus numpy and scipy too) each keep one child forked ahead of time,
waiting on a pipe for its job; the controller picks the cheapest tier that has what the job
imports, compiles the code, writes job and code object into that child's pipe and drains its
fd-level stdout/stderr.
"""

# ---------------- sandfleet_sandbox/boot.py
# The executor's start: it runs itself again, at once, in a fresh interpreter.
#
# A process that compiled the executor keeps the compiler's garbage in its heap, and each zygote
# forked from it would copy the entries of those pages at every fork, once per job. So the executor starts again in a fresh interpreter that runs the program's code object,
# unmarshalled from a memfd: nothing compiled there. First in `executor.py`, so that
# `sys._getframe().f_code` is the whole program's code; as a module of the package it does nothing.

import marshal, os, sys

_BOOT = ('import marshal, os, sys; fd = int(sys.argv.pop(1)); code = marshal.loads(os.pread(fd, os.fstat(fd).st_size, 0)); '
         'os.close(fd); exec(code, {"__name__": "__main__", "__file__": code.co_filename, "__builtins__": __builtins__, "FROM_CODE": True})')
if __name__ == '__main__' and not globals().get('FROM_CODE'):
    try:
        _fd = os.memfd_create('executor', 0)  # inherited by the new program
        os.write(_fd, marshal.dumps(sys._getframe().f_code))
        os.execv(sys.executable, [sys.executable, '-I', '-c', _BOOT, str(_fd)])
    except (OSError, ValueError, AttributeError):
        pass  # run on here, compiler garbage and all


# ---------------- sandfleet_sandbox/libc.py
# The C library, for the system calls Python's os module lacks (prctl, madvise, the System V IPC controls).

import ctypes

try: LIBC = ctypes.CDLL(None, use_errno=True)
except OSError: LIBC = None


def prctl(option, arg):
    if LIBC is not None: LIBC.prctl(option, arg, 0, 0, 0)


# ---------------- sandfleet_sandbox/limits.py
# What a job or a cell may use, by default and as set: memory, time, file size, open files, processes.

import os

# The contract's defaults (LIMITS in packages/protocol/src/exec.ts), for a frame that lacks the field: the runner sends
# every job's and every cell's own (a session's memory_mb is its own default, SESSION_LIMITS).
DEFAULT_MEMORY_MB = 1024
DEFAULT_TIMEOUT_MS = 10000
FSIZE = int(os.environ.get('SANDFLEET_MAX_FILE_MB', '64')) << 20
NPROC = int(os.environ.get('SANDFLEET_MAX_PROCS', '0'))  # RLIMIT_NPROC of a job; only meaningful in a user namespace of its own
NOFILE = 1024
PAGE = os.sysconf('SC_PAGE_SIZE')


def address_space(pages, frame):
    """RLIMIT_AS for a process now `pages` pages large that may allocate the frame's `memory_mb` beyond that."""
    return pages * PAGE + int(frame.get('memory_mb') or DEFAULT_MEMORY_MB) * 1048576


def timeout_ms_of(frame):
    """The frame's `timeout_ms`, or the default."""
    return int(frame.get('timeout_ms') or DEFAULT_TIMEOUT_MS)


# ---------------- sandfleet_sandbox/files.py
# A request's files: written into the work dir before its code runs, read back after it (`fetch_files`).

import base64, os, stat

FETCH_MAX_BYTES = 16 << 20  # a larger file is not returned (not cut either: a part of a file is not the file)


def write_files(base, files):
    """Writes `files` (relative path → base64) under directory `base`; ValueError for a path that leaves it."""
    for rel, b64 in files.items():
        path = os.path.normpath(rel)
        if path.startswith(('/', '..')): raise ValueError('files: %r escapes the working directory' % rel)
        if os.path.dirname(path): os.makedirs(os.path.join(base, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(base, path), 'wb') as f: f.write(base64.b64decode(b64))


def fetch_files(base, wanted, limit=FETCH_MAX_BYTES):
    """The `wanted` files (paths relative to directory `base`) as {path: base64}. Only a regular file whose real path is
    in `base` (a link out of it, also through a linked directory such as /proc/self, is refused), opened without
    following a last link and without blocking (a FIFO is refused), of at most `limit` bytes (a larger one is refused);
    a path that is missing or refused is left out. The caller sees to it that nothing swaps a path for a link meanwhile
    (the executor: nothing of the job is left; a session: the cell's own process reads, with the cell's own rights)."""
    files = {}
    if not wanted: return files
    root = os.path.realpath(base) + '/'
    for rel in wanted:
        p = os.path.realpath(os.path.join(root, rel))
        if not p.startswith(root): continue
        try: fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError: continue
        try:
            with open(fd, 'rb') as f:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_size > limit: continue
                data = f.read(limit + 1)  # the file may have grown since fstat
                if len(data) <= limit: files[rel] = base64.b64encode(data).decode()
        except OSError: pass
    return files


# ---------------- sandfleet_sandbox/tampering.py
# What an earlier job could have changed in the sandbox's other processes, read from outside them.
#
# Every process of a sandbox has one uid: a job can signal, renice or prlimit the zygotes, the spare
# job processes and the controller. The rlimits and scheduling each should have, taken at start-up
# before any job ran, catch that.

import itertools, os, resource


RLIMITS = tuple(getattr(resource, n) for n in dir(resource) if n.startswith('RLIMIT_'))


def scheduling(pid=0):
    """A process's nice value, scheduling policy and CPU affinity: what a job could change in another process."""
    return os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid), os.sched_getaffinity(pid)


START = (tuple(map(resource.getrlimit, RLIMITS)), scheduling())
# A spare job process as its zygote forked it: the sandbox's start, with the limits every zygote sets on itself.
SPARE_LIMITS = tuple({resource.RLIMIT_NOFILE: (NOFILE, NOFILE), resource.RLIMIT_FSIZE: (FSIZE, FSIZE)}.get(r, lim)
                     for r, lim in zip(RLIMITS, START[0]))


def tampered(pid):
    """True when the rlimits of spare job process `pid` are not SPARE_LIMITS or its scheduling is not START's: an
    earlier job changed them. Read from outside (prlimit), so the process itself runs nothing for it."""
    return scheduling(pid) != START[1] or tuple(map(resource.prlimit, itertools.repeat(pid, len(RLIMITS)), RLIMITS)) != SPARE_LIMITS


def signalled(pid):
    """True when a signal is pending for spare job process `pid` (its own or its process's set), or it is gone."""
    try:
        fd = os.open('/proc/%d/status' % pid, os.O_RDONLY)
        try: status = os.read(fd, 4096)
        finally: os.close(fd)
    except OSError: return True
    return any(line.startswith((b'SigPnd:', b'ShdPnd:')) and int(line.split()[1], 16) for line in status.splitlines())


# What a job could lower in the controller to break it (a job runs nothing else in it: the other limits do not matter).
CONTROLLER_RLIMITS = (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_DATA, resource.RLIMIT_NOFILE, resource.RLIMIT_STACK)
CONTROLLER_START = tuple(map(resource.getrlimit, CONTROLLER_RLIMITS))


def controller_tampered():
    """True when a job changed the controller's own limits or scheduling (its sandbox is then retired)."""
    return scheduling() != START[1] or tuple(map(resource.getrlimit, CONTROLLER_RLIMITS)) != CONTROLLER_START


# ---------------- sandfleet_sandbox/seccomp.py
# The runner's seccomp filter, added by the executor itself where the sandbox does not already have it.

import ctypes, os



class SockFprog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]


def add_seccomp(program):
    """Adds a seccomp filter (a classic BPF program: struct sock_filter items of 8 bytes) on top of the ones this
    process has; every process forked after keeps it. The runner's own (SANDFLEET_SECCOMP, base64) where the sandbox
    does not already have it (a Docker container has Docker's default profile only). Raises when it cannot."""
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buf))
    if LIBC is None: raise OSError('no C library to add the seccomp filter with')
    # PR_SET_NO_NEW_PRIVS (the kernel's condition for an unprivileged filter), then PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    if LIBC.prctl(38, 1, 0, 0, 0) != 0 or LIBC.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'the seccomp filter was refused: %s' % os.strerror(ctypes.get_errno()))


# ---------------- sandfleet_sandbox/job.py
# A job process: forked by its zygote ahead of its job, it runs one job's code in a fresh `__main__` and exits.
#
# Everything a job process does is paid in copy-on-write faults, once per job: it does as little as
# it can, and imports nothing (what it uses is imported here, before the zygotes fork).

import _signal, base64, gc, json, marshal, os, signal, sys, traceback
import __future__, ast, atexit, linecache, types  # what a job process would import (ast: traceback's carets): once, before the zygotes fork
# Not `random`: it reseeds itself in every forked process (CPU in every job); jobs that import it run on `std`.


# What a job process calls after the user's code, bound before it runs: a job that replaces os._exit, os.write, json.dumps
# or traceback.format_exception (its own modules) still gets its own exit status and error report.
_exit, _write, _dumps, _format_exception, _kill = os._exit, os.write, json.dumps, traceback.format_exception, os.kill
# A job process sets its SIGTERM handler through the C function: `signal.signal` wraps it in Python that turns the old
# handler into an enum member, which touches objects enough to cost each job dozens of copy-on-write faults
# (benchmarks/RESULTS.md, issue 21's before and after).
_set_handler, _SIGTERM = _signal.signal, int(signal.SIGTERM)
# The same for the builtins (int, str, isinstance, print, …): the executor reads them from its own globals, which a
# job's `builtins.int = str` does not reach. (No module of the executor defines a name of the builtins: build.py checks.)
import builtins
globals().update((k, v) for k, v in vars(builtins).items() if not k.startswith('_'))
WORKDIR = os.environ.get('SANDFLEET_WORKDIR', '/tmp/sandfleet-work-%d' % os.getpid())
# The job's code as a script in its working directory: its tracebacks (lines from linecache), __file__ and sys.argv[0]
# name it. Not written there: the working directory holds the request's files only.
MAIN_FILE = os.path.join(WORKDIR, 'main.py')

# Each job's __main__ namespace and the lines of its source (for tracebacks), made once in each zygote: a job process
# gets them as its zygote left them (nothing a job did in its own copy reaches its zygote), and making them in each
# job process would cost copy-on-write faults in each.
MAIN, SOURCE = {}, []


def fresh_main():
    """A fresh `__main__` module as `python3 MAIN_FILE` has it, with `MAIN` its namespace; `SOURCE` the lines of MAIN_FILE."""
    main = types.ModuleType('__main__')
    main.__builtins__, main.__file__, main.__cached__ = sys.modules['builtins'], MAIN_FILE, None
    sys.modules['__main__'], sys.argv = main, [MAIN_FILE]
    global MAIN
    MAIN = main.__dict__
    linecache.cache[MAIN_FILE] = (0, None, SOURCE, MAIN_FILE)  # mtime None: checkcache never drops it


def flush_and_die(signum, frame):
    """SIGTERM (the controller's, at the job's deadline): writes out what Python's streams hold, then dies of the
    signal, so a job that timed out keeps what it printed. Installed by each job process once its job has come."""
    for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try: s.flush()
        except BaseException: pass
    signal.signal(signum, signal.SIG_DFL)
    _kill(os.getpid(), signum)


def finish():
    """What the interpreter does as a script ends, before it exits: joins the non-daemon threads, then runs the
    atexit handlers (multiprocessing's joins its children there)."""
    threading = sys.modules.get('threading')
    if threading is not None:
        try: threading._shutdown()
        except BaseException: pass
    atexit._run_exitfuncs()


def child():
    """A job process: stdout, stderr, its report pipe and its job pipe are fds 1-4 already, its limits inherited or set
    by the controller; it blocks until the controller writes its job, runs it and exits."""
    os.setsid()
    os.closerange(5, 1 << 20)  # the zygote's socket and the pidfds of its other children
    chunks = []
    while True:
        data = os.read(4, 65536)
        if not data: break
        chunks.append(data)
    if not chunks: _exit(0)  # the controller is gone
    os.close(4)
    # Only now: a spare waiting for its job keeps SIGTERM's default, so one sent to it kills it at once, and the
    # controller, which checks a spare before giving it a job, never hands a job to a spare about to die.
    _set_handler(_SIGTERM, flush_and_die)
    try: status = run_job(*marshal.loads(b''.join(chunks)))
    except BaseException as e:
        try: _write(3, _dumps({'type': type(e).__name__, 'message': str(e)}).encode())
        except Exception: pass
        status = 1
    _exit(status)


def run_job(code, compiled, stdin, files):
    """Runs the job's code (`compiled`: its code object, or None when it does not compile) in a fresh __main__."""
    if stdin:
        fd = os.memfd_create('stdin', 0); os.write(fd, stdin); os.lseek(fd, 0, 0); os.dup2(fd, 0); os.close(fd)
    os.chdir(WORKDIR)  # made empty by the controller after the last job
    write_files(WORKDIR, files)
    SOURCE[:] = code.splitlines(True)
    gc.enable()
    status, report = 0, None
    try:
        exec(compiled or compile(code, MAIN_FILE, 'exec'), MAIN)
    except SystemExit as e:
        c = e.code
        if c is None: status = 0
        elif isinstance(c, int): status = c & 0xff
        else: print(c, file=sys.stderr); status = 1
        if status: report = {'type': 'SystemExit', 'message': str(c)}
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__: tb = tb.tb_next
        text = ''.join(_format_exception(type(e), e, tb))
        try: sys.stderr.write(text)
        except Exception: pass
        report = {'type': type(e).__name__, 'message': str(e)[:8192], 'traceback': text[-8192:], 'memory': isinstance(e, MemoryError)}
        status = 1
    if report: _write(3, _dumps(report).encode())
    for s in (sys.stdout, sys.stderr):  # before threads are joined: output of a job that then hangs is in its pipes
        try: s.flush()
        except Exception: pass
    finish()
    for s in (sys.stdout, sys.stderr):
        try: s.flush()
        except Exception: pass
    return status


# ---------------- sandfleet_sandbox/tiers.py
# The zygote tiers (what each preloads) and the choice of one for a job's code.
#
# `bare`: what the executor itself imports; `std`: plus the standard library jobs commonly import;
# `sym`: plus sympy and mpmath; `sci`: plus numpy and scipy too.

import re, sys

# Two scientific tiers: a zygote's size is paid at every job forked from it (page-table entries copied and torn down,
# refcounts written), and numpy and scipy more than double sympy's (benchmarks/RESULTS.md, "Executor").
SYM = ('sympy', 'mpmath')
SCI = ('numpy', 'sympy', 'scipy', 'mpmath')
# The tiers a job that wants the first one can run on, best first: one that preloads what it imports, else a cheaper one.
FALLBACK = {'bare': ('bare',), 'std': ('std', 'bare'), 'sym': ('sym', 'sci', 'std', 'bare'), 'sci': ('sci', 'sym', 'std', 'bare')}
# The standard library a job commonly imports and bare lacks: preloaded in `std`, not in `bare`, where every job would
# pay for them at its fork (benchmarks/RESULTS.md, "Executor").
STD = ('random', 'fractions', 'decimal', 'statistics', 'typing', 'dataclasses', 'datetime', 'heapq', 'bisect', 'string', 'copy',
       'itertools', 'functools', 'collections', 'math', 'operator', 'array', 'struct', 'hashlib', 'textwrap', 'pprint')
STDLIB = frozenset(sys.stdlib_module_names) | {'', '__main__'}
STDLIB_AND_SYM = STDLIB | frozenset(SYM)
# `from M import x` (group 1: M; its `import` is consumed, so x is not taken for a module) or `import M [as a], ...` (group 2)
IMPORT_RE = re.compile(r'\bfrom\s+([\w.]+)\s+import\b|\bimport\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)')


def installed(name):
    """Whether package `name` can be imported here (found, not imported)."""
    import importlib.util
    try: return importlib.util.find_spec(name) is not None
    except Exception: return False


def plan_tiers():
    """Each tier this sandbox has and what it preloads: `sym` when sympy or mpmath is installed, `sci` when it would hold
    something `sym` lacks."""
    planned = {'bare': [], 'std': list(STD), 'sym': [n for n in SYM if installed(n)], 'sci': [n for n in SCI if installed(n)]}
    if not planned['sym']: del planned['sym']
    if set(planned['sci']) <= set(planned.get('sym', [])): del planned['sci']
    return planned


def pick_tier(code, tiers, loaded):
    """The cheapest of the live `tiers` with what `code` imports: `bare` when all of it is in `loaded` (the top-level
    modules the bare zygote has), `std` when it is the standard library, `sym` when it is that and sympy or mpmath,
    `sci` otherwise (a tier that is not there falls back as FALLBACK says)."""
    if 'import' not in code: return 'bare'
    names = set()
    for source, group in IMPORT_RE.findall(code):
        if source: names.add(source.split('.')[0])
        else: names.update(part.split()[0].split('.')[0] for part in group.split(',') if part.strip())
    if '__import__' in code or 'import_module' in code: names.update(n for n in SCI if n in code)
    want = 'bare' if names <= loaded else 'std' if names <= STDLIB else 'sym' if names <= STDLIB_AND_SYM else 'sci'
    for name in FALLBACK[want]:
        if name in tiers: return name
    return 'bare'


# ---------------- sandfleet_sandbox/zygote.py
# A zygote: a warm process of one tier that forks a job process ahead of each job; and the controller's handle on it.
#
# The controller sends the next job process's pipes with each request; they arrive as fds 1-4 (the
# lowest free ones: the zygote keeps 1-4 closed), where the job process needs them.

import ctypes, gc, io, json, os, resource, select, signal, socket, sys, time


ZYGOTE_SOCKET = 5  # a zygote's socket to the controller; fds 1-4 are the next job process's
FDS_SPACE = socket.CMSG_SPACE(4 * 4)  # SCM_RIGHTS of four ints
FDS_1_TO_4 = b''.join(fd.to_bytes(4, sys.byteorder) for fd in (1, 2, 3, 4))
POLLIN, SIGKILL = select.POLLIN, signal.SIGKILL


def warm(tier):
    """Imports what the tier preloads and sets up, once, what every job process of the tier inherits; returns the
    modules it got."""
    got = []
    for name in STD if tier != 'bare' else ():
        try: __import__(name)
        except Exception: pass
    if tier == 'std': got = list(STD)
    if tier in ('sym', 'sci'):
        for name in SYM if tier == 'sym' else SCI:
            try: __import__(name); got.append(name)
            except Exception: pass
        if 'sympy' in got:
            try:
                import sympy
                x, y = sympy.symbols('x y')
                sympy.factor(x**4 - 1); sympy.expand((x + y)**5); sympy.simplify(sympy.sin(x)**2 + sympy.cos(x)**2)
                sympy.solve(x**2 - 3*x + 2, x); sympy.diff(sympy.exp(x) * x, x); sympy.Rational(3, 4) + sympy.sqrt(8)
            except Exception: pass
        os.register_at_fork(after_in_child=reseed)  # in the spare, ahead of its job
    std_streams()
    fresh_main()
    # Inherited by every job process: no per-job work for them. (Its address space, CPU time and process count are
    # the job's own: the controller sets them on the spare when its job comes; see Controller.limit.)
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))
    unbuffer_c_stdio()
    gc.collect(); gc.freeze(); gc.disable()
    if LIBC is not None: LIBC.malloc_trim(0)  # what the imports freed goes back: fewer pages to copy at each fork
    copy_code_mappings()
    if tier in ('sym', 'sci') and not os.environ.get('SANDFLEET_NO_HUGEPAGES'): collapse_huge_pages()
    return got


def reseed():
    """Fresh random state: every child of a zygote inherits the same generators. (`random` reseeds itself
    at fork, through os.register_at_fork; sympy's and numpy's global generators do not.)"""
    m = sys.modules.get('sympy.core.random')
    if m is not None and hasattr(m, 'seed'): m.seed()
    m = sys.modules.get('numpy.random')
    if m is not None: m.seed()


def unbuffer_c_stdio():
    """C-level stdout unbuffered (ctypes printf, C extensions): os._exit skips stdio's flush, and a job process
    would otherwise lose what sits in its buffer; unbuffered, nothing is left there and no job has to flush it."""
    if LIBC is None: return
    try: LIBC.setvbuf(ctypes.c_void_p.in_dll(LIBC, 'stdout'), None, 2, 0)  # _IONBF
    except (AttributeError, ValueError): pass


def std_streams():
    """sys.stdin/stdout/stderr on fds 0/1/2, made once in the zygote (made in each job process, they would cost
    copy-on-write faults in each). Made while fds 0-2 are a pipe, so they are the non-seekable streams a job's pipes are."""
    r, w = os.pipe()
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    os.dup2(r, 0); os.dup2(w, 1); os.dup2(w, 2)
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8')
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', line_buffering=True)
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, 'r', closefd=False), encoding='utf-8')
    for s in (sys.stdin, sys.stdout, sys.stderr): s.seekable()
    for fd, old in zip((0, 1, 2), saved): os.dup2(old, fd); os.close(old)
    os.close(r); os.close(w)


def collapse_huge_pages():
    """Backs the big anonymous regions with transparent huge pages (MADV_COLLAPSE, Linux 6.1+): fewer page
    table entries to copy at each fork and to tear down at each exit. Failure is harmless."""
    if LIBC is None: return
    LIBC.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    huge = 1 << 21
    try: maps = open('/proc/self/maps').read().splitlines()
    except OSError: return
    for line in maps:
        p = line.split()
        if 'w' not in p[1] or (len(p) > 5 and p[5] != '[heap]'): continue
        a, b = (int(x, 16) for x in p[0].split('-'))
        a, b = (a + huge - 1) & ~(huge - 1), b & ~(huge - 1)
        if b > a and LIBC.madvise(a, b - a, 14) == 0: LIBC.madvise(a, b - a, 25)  # MADV_HUGEPAGE, MADV_COLLAPSE


# The interpreter's own code and the C library's: what every job runs (see copy_code_mappings).
CODE_FILES = (os.path.basename(os.path.realpath(sys.executable)), 'libpython', 'libc.so', 'ld-linux', 'ld-musl')


def copy_code_mappings():
    """Makes fork copy the page-table entries of the interpreter's and the C library's code, instead of each job
    process faulting them in again (fork skips a file mapping's entries unless the mapping has private pages: one
    page of each is written, its own value back, under a brief PROT_WRITE). Failure (a
    kernel that refuses writable code) is harmless."""
    if LIBC is None: return
    LIBC.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try: maps = open('/proc/self/maps').read().splitlines()
    except OSError: return
    for line in maps:
        p = line.split()
        if len(p) < 6 or p[1][1] == 'w' or p[1][3] != 'p' or not os.path.basename(p[5]).startswith(CODE_FILES): continue
        a, b = (int(x, 16) for x in p[0].split('-'))
        prot = (1 if p[1][0] == 'r' else 0) | (4 if p[1][2] == 'x' else 0)
        if LIBC.mprotect(a, b - a, prot | 2) != 0: continue  # the whole mapping: a part would split it
        byte = ctypes.c_char.from_address(a); byte.value = byte.value
        LIBC.mprotect(a, b - a, prot)


def zygote(sock, tier, controller):
    """Warms the tier, then forks a job process each time the controller asks, ahead of its job; reports each one's
    exit status. The job process's pipes arrive with the request as fds 1-4, so it does not have to move them."""
    prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the controller
    if os.getppid() != controller: os._exit(0)
    t0 = time.perf_counter()
    got = warm(tier)
    os.closerange(1, 5)
    sock.send(b'r %d %s' % ((time.perf_counter() - t0) * 1000, json.dumps(got).encode()))
    poller = select.poll(); poller.register(sock, select.POLLIN)
    children = {}
    # Every page this loop writes is copied once per fork (the spare shares them all): it touches few objects, bound
    # here once, next to each other.
    poll, register, unregister, recvmsg, send = poller.poll, poller.register, poller.unregister, sock.recvmsg, sock.send
    fork, pidfd_open, closerange, killpg, waitpid, close = os.fork, os.pidfd_open, os.closerange, os.killpg, os.waitpid, os.close
    ready = b''  # the announcement of a spare forked while a job ran, sent with that job's end
    while True:
        for fd, _ in poll():
            if fd == ZYGOTE_SOCKET:
                try: msg, anc, _, _ = recvmsg(16, FDS_SPACE)
                except OSError: os._exit(0)
                if not msg: os._exit(0)
                if not anc or anc[0][2] != FDS_1_TO_4: os._exit(71)  # a broken invariant: the controller finds this tier gone
                try: pid = fork()
                except OSError:  # the sandbox's process limit (a job's fork bomb): asked again after that job
                    closerange(1, 5); send(b'e'); continue
                if pid == 0:
                    try: child()
                    finally: _exit(70)
                pidfd = pidfd_open(pid)
                closerange(1, 5)
                # While a job runs, its end is the controller's next concern: the new process is announced with it, in
                # one message, so the controller wakes once.
                if children: ready = b'\nc %d' % pid
                else: send(b'c %d' % pid)
                children[pidfd] = pid; register(pidfd, POLLIN)
            else:
                pid = children.pop(fd); unregister(fd)
                try: killpg(pid, SIGKILL)  # the job's group, while its leader is a zombie (pid not reusable)
                except OSError: pass
                _, status = waitpid(pid, 0); close(fd)
                send(b'x %d %d%s' % (pid, status, ready)); ready = b''


class Zygote:
    """The controller's handle on one zygote: its socket, its spare job process, the exit statuses it reported."""

    def __init__(self, name, others):
        self.name, self.warm, self.ready, self.dead, self.modules, self.ms = name, False, False, False, [], 0
        self.spare, self.exits, self.asked = None, {}, None
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        controller = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                for s in [self.sock] + [z.sock for z in others]: s.detach()
                os.dup2(theirs.detach(), ZYGOTE_SOCKET)
                os.closerange(3, ZYGOTE_SOCKET); os.closerange(ZYGOTE_SOCKET + 1, 1 << 20)  # the channel, the other zygotes' sockets
                zygote(socket.socket(fileno=ZYGOTE_SOCKET), name, controller)
            finally:
                os._exit(0)
        theirs.close()
        self.statm = os.open('/proc/%d/statm' % self.pid, os.O_RDONLY)  # read with pread at each job (Controller.limit)

    def ask(self):
        """Asks the zygote for its next job process, forked ahead of its job, and hands it the process's pipes (their
        other ends stay here): job (read by it), stdout, stderr and report (written by it)."""
        if self.asked is not None or self.spare is not None or self.dead or not self.warm: return
        job, out, err, rep = os.pipe(), os.pipe(), os.pipe(), os.pipe()
        try: socket.send_fds(self.sock, [b't'], [out[1], err[1], rep[1], job[0]])
        except OSError:
            for fd in (job[1], out[0], err[0], rep[0]): os.close(fd)
            return
        finally:
            for fd in (out[1], err[1], rep[1], job[0]): os.close(fd)
        for fd in (out[0], err[0], rep[0]): os.set_blocking(fd, False)
        self.asked = (job[1], out[0], err[0], rep[0])

    def on_message(self):
        """Reads one message; answers its (first) kind (b'r', b'c', b'x', b'e'), or None when the zygote is gone."""
        try: msg = self.sock.recv(4096)
        except OSError: msg = b''
        if not msg:
            self.dead = True
            return None
        first = None
        for part in msg.split(b'\n'):  # a job's end and the spare forked meanwhile come together: b'x PID STATUS\nc PID'
            kind = self.on_part(part)
            first = first or kind
        return first

    def on_part(self, msg):
        kind, rest = msg[:1], msg[2:]
        if kind == b'r':
            ms, mods = rest.split(b' ', 1)
            self.ms, self.modules, self.warm = int(ms), json.loads(mods), True
            self.ask()
        elif kind == b'c':
            self.spare, self.asked, self.ready = (int(rest), self.asked), None, True
        elif kind == b'x':
            pid, status = rest.split()
            self.exits[int(pid)] = int(status)
        elif kind == b'e':  # the fork failed (the sandbox's process limit): asked again after the job (Controller.run)
            for fd in self.asked: os.close(fd)
            self.asked = None
        return kind


# ---------------- sandfleet_sandbox/cleanup.py
# After each job: the processes it left behind killed, its work dir removed, the scratch dirs and System V IPC
# objects back to what the sandbox started with; the next job must see none of it.

import ctypes, os, signal, stat


SCRATCH = [d for d in os.environ.get('SANDFLEET_SCRATCH', '').split(':') if d]  # dirs emptied after each job
# System V IPC objects outlive the job that made them (they belong to the sandbox's IPC namespace): file, remover.
SYSV_IPC = (('/proc/sysvipc/shm', lambda i: LIBC.shmctl(i, 0, None)), ('/proc/sysvipc/msg', lambda i: LIBC.msgctl(i, 0, None)),
            ('/proc/sysvipc/sem', lambda i: LIBC.semctl(i, 0, 0)))  # IPC_RMID is 0


def remove_tree(path):
    """Removes the file, link or directory tree at `path`, also where a job took its own permissions away or nested
    directories far deeper than PATH_MAX or the recursion limit (iterative, walking with relative chdir; no job
    process is left to race it). False when something stays."""
    home = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
    ok = True
    try:
        os.chdir(os.path.dirname(path) or '/')
        names = [[os.path.basename(path)]]  # names[i]: what is still to remove at depth i (the last one is being removed)
        while names:
            if not names[-1]:  # everything below was removed (or could not be): go up, remove this directory
                names.pop()
                if not names: break
                os.chdir('..')
                try: os.rmdir(names[-1].pop())
                except OSError: ok = False
                continue
            n = names[-1][-1]
            try: st = os.lstat(n)
            except OSError:
                names[-1].pop(); continue
            if not stat.S_ISDIR(st.st_mode):
                try: os.unlink(n)
                except OSError: ok = False
                names[-1].pop(); continue
            try:
                os.chmod(n, 0o700); os.chdir(n)
                names.append(os.listdir('.'))
            except OSError:
                ok = False; names[-1].pop()
    except OSError: ok = False
    finally:
        os.fchdir(home); os.close(home)
    return ok


IPC_INFO_BUF = ctypes.create_string_buffer(256)


def sysv_in_use():
    """How many shm segments, message queues and semaphore sets exist (SHM_INFO, MSG_INFO, SEM_INFO: three syscalls,
    cheaper than reading /proc/sysvipc after each job); None without libc."""
    if LIBC is None: return None
    b = IPC_INFO_BUF
    try:
        LIBC.shmctl(0, 14, b); shm = ctypes.c_int.from_buffer(b, 0).value    # struct shm_info: used_ids
        LIBC.msgctl(0, 12, b); msg = ctypes.c_int.from_buffer(b, 0).value    # struct msginfo: msgpool
        LIBC.semctl(0, 0, 19, b); sem = ctypes.c_int.from_buffer(b, 28).value  # struct seminfo: semusz
    except (AttributeError, OSError): return None
    return shm, msg, sem


def sysv_ids(path):
    """The ids listed in one /proc/sysvipc file (empty when it is not readable)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try: text = os.read(fd, 1 << 20)
        finally: os.close(fd)
    except OSError: return set()
    return {int(f[1]) for f in (line.split() for line in text.splitlines()[1:]) if len(f) > 1}


class Cleanup:
    """The sandbox as it started (the scratch dirs' entries, their modes, the System V IPC objects) and a fresh work
    dir; `clean` puts them back after a job."""

    def __init__(self, workdir, scratch):
        self.workdir = workdir
        remove_tree(workdir)  # an earlier executor's, where the work dir outlives its sandbox
        os.mkdir(workdir, 0o700)  # the first job's (each job's is made fresh after the one before: see clean)
        self.scratch = {d: set(os.listdir(d)) for d in scratch if os.path.isdir(d)}
        # a job may chmod these (the sandbox's uid owns /tmp): set back after each job
        self.modes = {d: stat.S_IMODE(os.stat(d).st_mode) for d in {*self.scratch, os.path.dirname(workdir)} if os.path.isdir(d)}
        self.ipc = {path: sysv_ids(path) for path, _ in SYSV_IPC} if LIBC is not None else {}
        self.ipc_in_use = sysv_in_use()

    def clean(self):
        """Removes the job's working directory, whatever it left in the scratch dirs and its System V IPC objects.
        False when something could not be removed (the sandbox is then retired: the next job must not see it)."""
        ok = True
        for d, mode in self.modes.items():
            try: os.chmod(d, mode)
            except OSError: pass
        try: os.rmdir(self.workdir)
        except FileNotFoundError: pass
        except OSError: ok = remove_tree(self.workdir)
        for d, base in self.scratch.items():
            try: names = os.listdir(d)
            except OSError:
                ok = False; continue
            for n in names:
                if n not in base: ok = remove_tree(os.path.join(d, n)) and ok
        if self.ipc_in_use is None or sysv_in_use() != self.ipc_in_use:
            for path, remove in SYSV_IPC:
                if path in self.ipc:
                    for i in sysv_ids(path) - self.ipc[path]: remove(i)
        try: os.mkdir(self.workdir, 0o700)  # the next job's, fresh
        except OSError: ok = False
        return ok


def sweep(children, keep):
    """Kills every process a job left behind (reparented to the controller, the subreaper; `children`: its
    /proc/self/task/PID/children, open), all but the pids in `keep`. False if some survive."""
    for _ in range(50):
        try: pids = [p for p in map(int, os.pread(children, 1 << 16, 0).split()) if p not in keep]
        except OSError: pids = []
        if not pids: return True
        for p in pids:
            try: os.kill(p, signal.SIGKILL)
            except OSError: pass
        for p in pids:
            try: os.waitpid(p, 0)
            except OSError: pass
    return False


# ---------------- sandfleet_sandbox/controller.py

import base64, json, marshal, os, resource, select, signal, socket, sys, time


# How long a job runs before the controller also watches its pipes (a full pipe blocks the job until then).
PATIENCE_S = float(os.environ.get('SANDFLEET_PIPE_PATIENCE_MS', '20')) / 1000
# At its deadline a job gets SIGTERM (its handler flushes what Python holds of its output) and this long to go, then SIGKILL.
FLUSH_GRACE_S = float(os.environ.get('SANDFLEET_FLUSH_GRACE_MS', '100')) / 1000
# The sandbox's memory cgroup, as a container sees it (v2, then v1): its count of OOM kills.
OOM_FILES = ('/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control')


def oom_kills():
    """OOM kills in this sandbox's memory cgroup so far, or None where no cgroup file is visible."""
    for path in OOM_FILES:
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(' ')
                    if key == 'oom_kill': return int(value)
        except (OSError, ValueError): continue
    return None


def oom_score_adj(value):
    """Sets this process's OOM score adjustment (writable only while the process is dumpable: no job may run then)."""
    prctl(4, 1)  # PR_SET_DUMPABLE
    try:
        fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)
        try: os.write(fd, b'%d' % value)
        finally: os.close(fd)
    except OSError: pass
    prctl(4, 0)


def channel():
    """The runner's channel: (fd read from, fd written to). stdin/stdout; or, when SANDFLEET_CHANNEL names the runner's
    listening Unix socket (the docker driver binds it into the container), that socket, connected once, here, before
    any job runs."""
    path = os.environ.get('SANDFLEET_CHANNEL')
    if not path: return os.dup(0), os.dup(1)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    fd = sock.detach()
    return fd, fd


class Controller:
    def __init__(self):
        self.chan_in, self.chan = channel()
        null = os.open('/dev/null', os.O_RDWR)
        for fd in (0, 1, 2): os.dup2(null, fd)
        os.close(null)
        os.set_inheritable(self.chan_in, False); os.set_inheritable(self.chan, False)
        self.buf, self.frames, self.closing, self.told = [], [], False, None  # buf: the chunks of a frame not ended yet
        self.cleanup = Cleanup(WORKDIR, SCRATCH)
        self.ooms = oom_kills()
        # what every tier has: the executor's own imports (a job importing only those runs on bare)
        self.loaded = frozenset(m.split('.')[0] for m in sys.modules)
        # bare first: forked before anything else is imported or allocated here (each page it holds is copied at each fork)
        self.zygotes = {'bare': Zygote('bare', [])}
        self.planned = plan_tiers()
        for name in self.planned:
            if name not in self.zygotes: self.zygotes[name] = Zygote(name, list(self.zygotes.values()))
        self.keep = {z.pid for z in self.zygotes.values()}
        # /proc files kept open and read again with pread (cheaper than open, read and close each time)
        self.children = os.open('/proc/self/task/%d/children' % os.getpid(), os.O_RDONLY)
        self.by_fd = {z.sock.fileno(): z for z in self.zygotes.values()}
        self.poller = select.poll()
        self.poller.register(self.chan_in, select.POLLIN)
        for fd in self.by_fd: self.poller.register(fd, select.POLLIN)

    def send(self, frame): os.write(self.chan, json.dumps(frame).encode() + b'\n')

    def pump(self, timeout_ms):
        """One poll round: zygote messages and channel input. Returns the fds that were readable."""
        events = self.poller.poll(timeout_ms)
        for fd, _ in events:
            z = self.by_fd.get(fd)
            if z is not None:
                kind = z.on_message()
                if kind is None:
                    self.poller.unregister(fd); del self.by_fd[fd]
                    self.send({'op': 'log', 'level': 'error', 'message': 'zygote %s exited' % z.name})
                if kind is None or kind == b'r': self.tell()
            elif fd == self.chan_in:
                data = os.read(self.chan_in, 65536)
                if not data: self.closing = True; self.poller.unregister(fd); continue
                # A frame of megabytes (stdin, files) comes in many reads: its chunks are joined once, at its newline
                # (joining and scanning the whole buffer at each read would be quadratic in the frame's size).
                self.buf.append(data)
                if b'\n' not in data: continue
                *lines, rest = b''.join(self.buf).split(b'\n')
                self.buf = [rest] if rest else []
                for line in lines:
                    if not line.strip(): continue
                    try: frame = json.loads(line)
                    except ValueError:
                        self.send({'op': 'log', 'level': 'error', 'message': 'a frame that is not JSON'}); continue
                    if frame.get('op') == 'shutdown': self.closing = True
                    elif frame.get('op') == 'exec': self.frames.append(frame)
        return events

    def tell(self):
        """After `ready`: one `tier` frame per tier that finished warming, or died."""
        if self.told is None: return
        for z in self.zygotes.values():
            state = 'dead' if z.dead else 'warm' if z.warm else None
            if state is None or self.told.get(z.name) == state: continue
            self.told[z.name] = state
            if z.name != 'bare' or z.dead:
                self.send({'op': 'tier', 'name': z.name, 'ready': not z.dead, 'ms': z.ms, 'modules': z.modules})

    def serve(self):
        bare = self.zygotes['bare']
        while not bare.ready and not bare.dead: self.pump(-1)
        if bare.dead: sys.exit(1)
        self.send({'op': 'ready', 'protocol': 1, 'pid': os.getpid(), 'python': sys.version.split()[0],
                   'tiers': self.planned, 'packages': {}})
        self.told = {}
        self.tell()
        while not self.closing:
            if self.frames:
                self.send(self.run(self.frames.pop(0)))
            else:
                self.pump(-1)
        sweep(self.children, self.keep)
        remove_tree(WORKDIR)

    def tier_for(self, frame):
        """The job's zygote, once it has a spare child; a cheaper one when the job's tier died; None when the job's
        `wait_ms` (what is left of its queue timeout) ran out while its tier warmed."""
        while True:
            z = self.zygotes[pick_tier(frame.get('code', ''), {n for n, z in self.zygotes.items() if not z.dead}, self.loaded)]
            if not z.warm and not z.dead:  # the runner allows a job that waits for a warming tier more time
                self.send({'op': 'waiting', 'id': frame.get('id'), 'tier': z.name})
                t0 = time.perf_counter()
                limit = frame.get('wait_ms')
                end = t0 + limit / 1000 if isinstance(limit, (int, float)) else None
                while not z.ready and not z.dead and not self.closing:
                    if end is None: self.pump(-1); continue
                    left = end - time.perf_counter()
                    if left <= 0: return None
                    self.pump(max(1, int(left * 1000)))
                frame['waited_ms'] = (time.perf_counter() - t0) * 1000
            while not z.ready and not z.dead and not self.closing: self.pump(-1)
            if not z.dead or z.name == 'bare': return z

    def run(self, job):
        payload = None
        for _ in range(3):  # an earlier job may have killed the spare job process: take the next one
            z = self.tier_for(job)
            if z is None:
                result = failed(job, 'queue_timeout', 'TierWarming', 'the tier this job needs was still warming when its queue timeout ran out (%d ms)' % job['wait_ms'], retire=False)
                result['waited_ms'] = job['wait_ms']
                return result
            if z.dead or self.closing or z.spare is None:
                return failed(job, 'killed', 'ZygoteExited', 'the %s zygote is gone' % z.name)
            pid, (job_w, out_r, err_r, rep_r) = z.spare
            z.spare = None
            z.ready = False
            t0 = time.perf_counter()
            z.ask()  # the next job process is forked while this job runs
            try:
                if tampered(pid):  # reniced, limited, pinned by a job that ran while it waited
                    os.kill(pid, signal.SIGKILL)
                    for fd in (job_w, out_r, err_r, rep_r): os.close(fd)
                    return failed(job, 'infra_error', 'SandboxTampered', 'an earlier job changed the limits of this sandbox\'s processes; the sandbox is replaced')
                if signalled(pid):  # an earlier job signalled it, and the signal waits (a stopped process keeps it): it would end this job
                    os.kill(pid, signal.SIGKILL)
                    raise OSError('a signal is pending for the spare job process')
                if payload is None: payload = marshal.dumps((job.get('code', ''), precompile(job.get('code', '')), (job.get('stdin') or '').encode(), job.get('files') or {}))
                self.limit(z, pid, job)
                os.kill(pid, signal.SIGCONT)  # or a job stopped it
                os.write(job_w, payload)  # the job process reads it all before it writes anything
                break
            except OSError:
                for fd in (job_w, out_r, err_r, rep_r): os.close(fd)
        else:
            return failed(job, 'killed', 'SpareExited', 'the job process was killed before its job came')
        cap = int(job.get('max_output_bytes') or 65536)
        os.close(job_w)
        bufs = {out_r: bytearray(), err_r: bytearray(), rep_r: bytearray()}
        trunc = {out_r: False, err_r: False, rep_r: False}
        deadline = t0 + timeout_ms_of(job) / 1000
        # The pipes are watched only once the job has run PATIENCE_S: most jobs end sooner, their output waiting in the
        # pipes, and the controller wakes once, for the zygote's report of the exit, not also for each write.
        watch_from = t0 + PATIENCE_S
        watching = timed_out = killed = False

        def drain(fd):
            """Reads what is there; False at EOF, None when nothing is."""
            try: data = os.read(fd, 65536)
            except BlockingIOError: return None
            if not data:
                open_fds.discard(fd)
                if watching: self.poller.unregister(fd)
                return False
            room = cap - len(bufs[fd])
            if len(data) > room: trunc[fd] = True; data = data[:max(room, 0)]
            bufs[fd] += data
            return True
        open_fds = set(bufs)
        while pid not in z.exits and not z.dead:
            now = time.perf_counter()
            left = deadline - now
            if (left <= 0 or self.closing) and not killed:
                if not self.closing and not timed_out:  # the deadline: SIGTERM first (its handler flushes the output)
                    timed_out = True
                    try: os.killpg(pid, signal.SIGTERM)
                    except OSError: pass
                    deadline = now + FLUSH_GRACE_S
                    continue
                killed = True
                try: os.killpg(pid, signal.SIGKILL)
                except OSError: pass
                deadline = time.perf_counter() + 1  # the zygote reports the exit; past this, give up on it
            elif left <= 0: break
            if not watching and now >= watch_from:
                watching = True
                for fd in open_fds: self.poller.register(fd, select.POLLIN)
            wait = left if watching else min(left, watch_from - now)
            for fd, _ in self.pump(int(max(wait, 0) * 1000) + 1):
                if fd in open_fds: drain(fd)
        duration = (time.perf_counter() - t0) * 1000
        wstatus = z.exits.pop(pid, None)
        leftover = sweep(self.children, self.keep)
        for other in self.zygotes.values():  # a job may have stopped a zygote: nothing of the job is left to do it again
            if not other.dead:
                try: os.kill(other.pid, signal.SIGCONT)
                except OSError: pass
                other.ask()  # when its fork failed during the job (the sandbox's process limit)
        if controller_tampered(): leftover = False  # the job reniced or prlimited the controller: retire
        for fd in list(open_fds):
            while drain(fd): pass  # every writer is dead or dying: EOF, or nothing more will come
            if fd in open_fds and watching: self.poller.unregister(fd)
        for fd in bufs: os.close(fd)
        files = fetch_files(WORKDIR, job.get('fetch_files')) if wstatus is not None else {}
        cleaned = self.cleanup.clean()
        try: report = json.loads(bufs[rep_r]) if bufs[rep_r] else None
        except ValueError: report = None
        if not isinstance(report, dict): report = None
        exit_code, error, retire = None, None, not leftover or not cleaned or wstatus is None
        if timed_out:
            status, retire = 'timeout', True
            error = {'type': 'Timeout', 'message': 'the run exceeded timeout_ms=%s' % job.get('timeout_ms')}
        elif wstatus is None:
            status, error = 'killed', {'type': 'ZygoteExited', 'message': 'the %s zygote is gone' % z.name}
        elif os.WIFEXITED(wstatus):
            exit_code = os.WEXITSTATUS(wstatus)
            status = 'ok' if exit_code == 0 else 'error'
            if exit_code and report:  # written by the job process: anything a job wrote to fd 3 may be here
                error = {'type': str(report.get('type', 'ExitCode'))[:256], 'message': str(report.get('message', 'exited with code %d' % exit_code))[:8192]}
                if 'traceback' in report: error['traceback'] = str(report['traceback'])[-8192:]
                if report.get('memory') is True: status, retire = 'memory', True
            elif exit_code:
                error = {'type': 'ExitCode', 'message': 'exited with code %d' % exit_code}
        else:
            sig = os.WTERMSIG(wstatus)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            status = 'timeout' if sig == signal.SIGXCPU else 'killed'
            error = {'type': name, 'message': 'killed by signal %d (%s)' % (sig, name)}
            ooms = oom_kills() if sig == signal.SIGKILL and self.ooms is not None else None
            if ooms is not None and ooms > self.ooms:
                # The sandbox's memory cgroup ran out and the kernel killed the job (its oom_score_adj is 1000).
                self.ooms, status, retire = ooms, 'memory', True
                error = {'type': 'MemoryError', 'message': 'the sandbox ran out of memory: the kernel killed the job (cgroup OOM)'}
        result = {'op': 'result', 'id': job.get('id'), 'status': status, 'exit_code': exit_code,
                  'stdout': bufs[out_r].decode('utf-8', 'replace'), 'stderr': bufs[err_r].decode('utf-8', 'replace'),
                  'duration_ms': duration, 'truncated': {'stdout': trunc[out_r], 'stderr': trunc[err_r]},
                  'error': error, 'files': files, 'retire': retire or z.dead, 'tier': z.name}
        if 'waited_ms' in job: result['waited_ms'] = job['waited_ms']
        return result

    def limit(self, z, pid, job):
        """Sets the job's own limits on spare `pid` of zygote `z`, from here (prlimit): address space (its size plus
        memory_mb), CPU time (a backstop past timeout_ms) and, where configured, processes."""
        mem = address_space(int(os.pread(z.statm, 256, 0).split()[0]), job)  # the zygote's size: the spare's, forked from it
        resource.prlimit(pid, resource.RLIMIT_AS, (mem, mem))
        cpu = timeout_ms_of(job) // 1000 + 2
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu + 1))
        if NPROC: resource.prlimit(pid, resource.RLIMIT_NPROC, (NPROC, NPROC))


def precompile(code):
    """The job's code compiled here, or None when it does not compile (the job then raises the error itself). Compiling
    in a fresh fork costs copy-on-write faults; here, where the compiler's pages are already private, a fraction of
    that; the code object travels to the job process marshalled."""
    try: return compile(code, MAIN_FILE, 'exec', dont_inherit=True)
    except BaseException: return None


def failed(job, status, type_, message, retire=True):
    return {'op': 'result', 'id': job.get('id'), 'status': status, 'exit_code': None, 'stdout': '', 'stderr': '',
            'duration_ms': 0, 'truncated': {'stdout': False, 'stderr': False}, 'error': {'type': type_, 'message': message},
            'files': {}, 'retire': retire, 'tier': None}


def main():
    if os.environ.get('SANDFLEET_SECCOMP'): add_seccomp(base64.b64decode(os.environ.pop('SANDFLEET_SECCOMP')))
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: what a job leaves behind is reparented to us
    prctl(4, 0)   # PR_SET_DUMPABLE 0: job processes (same uid) cannot ptrace the controller or the zygotes
    for k in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ[k] = '1'
    # matplotlib: Agg, and a writable cache dir beside the work dir (a scratch dir's new entry: removed after each job),
    # so a job that imports it builds its font cache there instead of warning on stderr about a read-only home.
    os.environ.setdefault('MPLBACKEND', 'Agg')
    os.environ.setdefault('MPLCONFIGDIR', WORKDIR + '-matplotlib')
    # The OOM killer takes a job first: the zygotes and every job process inherit 1000; the controller goes back to 0
    # before any job runs.
    oom_score_adj(1000)
    controller = Controller()
    oom_score_adj(0)
    controller.serve()


if __name__ == '__main__':
    main()
