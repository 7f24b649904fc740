"""A zygote process: warm with one tier's modules, it forks a job process (or a reuse process) ahead of each job, reaps
each and reports its end. Its code runs in the zygote; the controller's handle on it is zygote_handle.py.

The controller sends the next job process's pipes with each request; they arrive as fds 1-4 (the
lowest free ones: the zygote keeps 1-4 closed), where the job process needs them.
"""
import ctypes
import gc
import io
import json
import os
import resource
import select
import signal
import socket
import sys
import time

from .libc import LIBC, prctl
from .limits import FSIZE, JOB_PRIORITY, NOFILE
from .job_process import _exit, child, fresh_main
from .reuse_process import TAGS_WORK, reuse_child, take_baseline
from .tiers import SCI, STD, SYM
from .sandbox_env import SANDBOX_ENV, SANDBOX_KNOBS

# The runner's level for jobs that name none: with `reuse`, each zygote takes the reuse baseline as it warms (its reuse
# process is made when a job first asks for one: a long-lived process holds privately the pages it touched, tens of MiB
# on the scientific tiers, which a tier no job uses need not pay).
REUSE_AHEAD = os.environ.get(SANDBOX_ENV['isolation']) == 'reuse'
ZYGOTE_SOCKET = 5  # a zygote's socket to the controller; fds 1-4 are the next job process's
FDS_SPACE = socket.CMSG_SPACE(4 * 4)  # SCM_RIGHTS of four ints
FDS_1_TO_4 = b''.join(fd.to_bytes(4, sys.byteorder) for fd in (1, 2, 3, 4))
POLLIN, SIGKILL = select.POLLIN, signal.SIGKILL


def warm(tier):
    """Imports what the tier preloads and sets up, once, what every job process of the tier inherits; returns the
    modules it got."""
    got = []
    for name in STD if tier != 'bare' else ():
        try:
            __import__(name)
        except Exception:
            pass
    if tier == 'std':
        got = list(STD)
    if tier in ('sym', 'sci'):
        for name in SYM if tier == 'sym' else SCI:
            try:
                __import__(name)
                got.append(name)
            except Exception:
                pass
        if 'sympy' in got:
            try:
                import sympy

                x, y = sympy.symbols('x y')
                sympy.factor(x**4 - 1)
                sympy.expand((x + y) ** 5)
                sympy.simplify(sympy.sin(x) ** 2 + sympy.cos(x) ** 2)
                sympy.solve(x**2 - 3 * x + 2, x)
                sympy.diff(sympy.exp(x) * x, x)
                sympy.Rational(3, 4) + sympy.sqrt(8)
                # What jobs commonly call imports more of sympy on first use; a job that did it would retire its reuse
                # process.
                k = sympy.symbols('k', integer=True, positive=True)
                sympy.integrate(x * sympy.exp(x) + sympy.sin(x) ** 2, x)
                sympy.integrate(sympy.sin(x), (x, 0, sympy.pi))
                sympy.summation(1 / k**2, (k, 1, sympy.oo))
                sympy.limit(sympy.sin(x) / x, x, 0)
                sympy.series(sympy.exp(x), x, 0, 4)
                sympy.N(sympy.pi, 15)
                sympy.Matrix([[2, 1], [1, 3]]).det()
                sympy.factorint(360)
                sympy.isprime(2**31 - 1)
                sympy.nsimplify(0.5)
                sympy.solve([x + y - 10, x - y - 2], [x, y])
                sympy.totient(100)
                if tier == 'sci':
                    sympy.lambdify(x, x**2)(3)  # lambdify to numpy (and what scipy imports for it)
            except Exception:
                pass
        os.register_at_fork(after_in_child=reseed)  # in the spare, ahead of its job
    std_streams()
    fresh_main()
    # Inherited by every job process: no per-job work for them. (Its address space, CPU time and process count are
    # the job's own: the controller sets them on the spare when its job comes; see Placement.limit.)
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE, FSIZE))
    unbuffer_c_stdio()
    if REUSE_AHEAD and TAGS_WORK:
        take_baseline()
    gc.collect()
    gc.freeze()
    gc.disable()
    if LIBC is not None:
        LIBC.malloc_trim(0)  # what the imports freed goes back: fewer pages to copy at each fork
    copy_code_mappings()
    if tier in ('sym', 'sci') and not os.environ.get(SANDBOX_KNOBS['no_hugepages']):
        collapse_huge_pages()
    return got


def reseed():
    """Fresh random state: every child of a zygote inherits the same generators. (`random` reseeds itself
    at fork, through os.register_at_fork; sympy's and numpy's global generators do not.)"""
    m = sys.modules.get('sympy.core.random')
    if m is not None and hasattr(m, 'seed'):
        m.seed()
    m = sys.modules.get('numpy.random')
    if m is not None:
        m.seed()


def unbuffer_c_stdio():
    """C-level stdout unbuffered (ctypes printf, C extensions): os._exit skips stdio's flush, and a job process
    would otherwise lose what sits in its buffer; unbuffered, nothing is left there and no job has to flush it."""
    if LIBC is None:
        return
    try:
        LIBC.setvbuf(ctypes.c_void_p.in_dll(LIBC, 'stdout'), None, 2, 0)  # _IONBF
    except (AttributeError, ValueError):
        pass


def std_streams():
    """sys.stdin/stdout/stderr on fds 0/1/2, made once in the zygote (made in each job process, they would cost
    copy-on-write faults in each). Made while fds 0-2 are a pipe, so they are the non-seekable streams a job's pipes
    are.
    """
    r, w = os.pipe()
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    os.dup2(r, 0)
    os.dup2(w, 1)
    os.dup2(w, 2)
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, 'w', closefd=False), encoding='utf-8')
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.FileIO(2, 'w', closefd=False), encoding='utf-8', errors='backslashreplace', line_buffering=True
    )
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, 'r', closefd=False), encoding='utf-8')
    for s in (sys.stdin, sys.stdout, sys.stderr):
        s.seekable()
    for fd, old in zip((0, 1, 2), saved):
        os.dup2(old, fd)
        os.close(old)
    os.close(r)
    os.close(w)


def collapse_huge_pages():
    """Backs the big anonymous regions with transparent huge pages (MADV_COLLAPSE, Linux 6.1+): fewer page
    table entries to copy at each fork and to tear down at each exit. Failure is harmless."""
    if LIBC is None:
        return
    LIBC.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    huge = 1 << 21
    try:
        maps = open('/proc/self/maps').read().splitlines()
    except OSError:
        return
    for line in maps:
        p = line.split()
        if 'w' not in p[1] or (len(p) > 5 and p[5] != '[heap]'):
            continue
        a, b = (int(x, 16) for x in p[0].split('-'))
        a, b = (a + huge - 1) & ~(huge - 1), b & ~(huge - 1)
        if b > a and LIBC.madvise(a, b - a, 14) == 0:
            LIBC.madvise(a, b - a, 25)  # MADV_HUGEPAGE, MADV_COLLAPSE


# The interpreter's own code and the C library's: what every job runs (see copy_code_mappings).
CODE_FILES = (os.path.basename(os.path.realpath(sys.executable)), 'libpython', 'libc.so', 'ld-linux', 'ld-musl')


def copy_code_mappings():
    """Makes fork copy the page-table entries of the interpreter's and the C library's code, instead of each job
    process faulting them in again (fork skips a file mapping's entries unless the mapping has private pages: one
    page of each is written, its own value back, under a brief PROT_WRITE). Failure (a
    kernel that refuses writable code) is harmless."""
    if LIBC is None:
        return
    LIBC.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try:
        maps = open('/proc/self/maps').read().splitlines()
    except OSError:
        return
    for line in maps:
        p = line.split()
        if len(p) < 6 or p[1][1] == 'w' or p[1][3] != 'p' or not os.path.basename(p[5]).startswith(CODE_FILES):
            continue
        a, b = (int(x, 16) for x in p[0].split('-'))
        prot = (1 if p[1][0] == 'r' else 0) | (4 if p[1][2] == 'x' else 0)
        if LIBC.mprotect(a, b - a, prot | 2) != 0:
            continue  # the whole mapping: a part would split it
        byte = ctypes.c_char.from_address(a)
        byte.value = byte.value
        LIBC.mprotect(a, b - a, prot)


def zygote(sock, tier, controller):
    """Warms the tier, then forks a job process each time the controller asks, ahead of its job; reports each one's
    exit status and CPU time. The job process's pipes arrive with the request as fds 1-4, so it does not have to move
    them."""
    prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the controller
    if os.getppid() != controller:
        os._exit(0)
    t0 = time.perf_counter()
    got = warm(tier)
    os.closerange(1, 5)
    sock.send(b'r %d %s' % ((time.perf_counter() - t0) * 1000, json.dumps(got).encode()))
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    children, reusing = {}, set()  # pidfd → pid of each child; the pids of the reuse processes among them
    # Every page this loop writes is copied once per fork (the spare shares them all): it touches few objects, bound
    # here once, next to each other.
    poll, register, unregister, recvmsg, send = poller.poll, poller.register, poller.unregister, sock.recvmsg, sock.send
    fork, pidfd_open, closerange, killpg, wait4, close, setpriority, PRIO_PROCESS = (
        os.fork,
        os.pidfd_open,
        os.closerange,
        os.killpg,
        os.wait4,
        os.close,
        os.setpriority,
        os.PRIO_PROCESS,
    )
    ready = b''  # the announcement of a spare forked while a job ran, sent with that job's end
    while True:
        for fd, _ in poll():
            if fd == ZYGOTE_SOCKET:
                try:
                    msg, anc, _, _ = recvmsg(16, FDS_SPACE)
                except OSError:
                    os._exit(0)
                if not msg:
                    os._exit(0)
                if not anc or anc[0][2] != FDS_1_TO_4:
                    os._exit(71)  # a broken invariant: the controller finds this tier gone
                reuse = msg[:1] == b'u'  # b't': a spare, forked for one job; b'u': a reuse process
                if reuse:
                    take_baseline()  # once: every reuse process shares it
                try:
                    pid = fork()
                except OSError:  # the sandbox's process limit (a job's fork bomb): asked again after that job
                    closerange(1, 5)
                    send(b'e u' if reuse else b'e t')
                    continue
                if pid == 0:
                    try:
                        reuse_child() if reuse else child()
                    finally:
                        _exit(70)
                try:
                    setpriority(PRIO_PROCESS, pid, JOB_PRIORITY)  # before the controller sees it (limits.JOB_NICE)
                except OSError:
                    pass  # it died at once: its exit is reported as any child's (its pidfd)
                pidfd = pidfd_open(pid)
                closerange(1, 5)
                if reuse:
                    reusing.add(pid)
                    send(b'u %d' % pid)
                # While a spare runs a job, its end is the controller's next concern: the new spare is announced with
                # it, in one message, so the controller wakes once.
                elif len(children) > len(reusing):
                    ready = b'\nc %d' % pid
                else:
                    send(b'c %d' % pid)
                children[pidfd] = pid
                register(pidfd, POLLIN)
            else:
                pid = children.pop(fd)
                unregister(fd)
                reusing.discard(pid)
                try:
                    killpg(pid, SIGKILL)  # the job's group, while its leader is a zombie (pid not reusable)
                except OSError:
                    pass
                _, status, usage = wait4(pid, 0)
                close(fd)
                # its exit status and its CPU (user + system, its threads and the children it reaped), in microseconds
                send(b'x %d %d %d%s' % (pid, status, (usage.ru_utime + usage.ru_stime) * 1e6, ready))
                ready = b''
