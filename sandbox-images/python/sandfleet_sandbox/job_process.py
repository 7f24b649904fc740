"""A job process: forked by its zygote ahead of its job, it runs one job's code in a fresh `__main__` and exits.

Everything a job process does is paid in copy-on-write faults, once per job: it does as little as
it can, and imports nothing (what it uses is imported here, before the zygotes fork).
"""
import _signal
import builtins
import gc
import json
import marshal
import os
import signal
import sys
import traceback

# what a job process would import (ast: traceback's carets): once, before the zygotes fork
import __future__  # noqa: F401
import ast  # noqa: F401
import atexit
import io
import linecache
import types

# Not `random`: it reseeds itself in every forked process (CPU in every job); jobs that import it run on `std`.

from .files import write_files
from .sandbox_env import SANDBOX_ENV

# What a job process calls after the user's code, bound before it runs: a job that replaces os._exit, os.write,
# json.dumps or traceback.format_exception (its own modules) still gets its own exit status and error report.
_exit, _write, _dumps, _format_exception, _kill = os._exit, os.write, json.dumps, traceback.format_exception, os.kill
# A job process sets its SIGTERM handler through the C function: `signal.signal` wraps it in Python that turns the old
# handler into an enum member, which touches objects enough to cost each job dozens of copy-on-write faults
# (benchmarks/RESULTS.md, issue 21's before and after).
_set_handler, _SIGTERM, _SIG_DFL = _signal.signal, int(signal.SIGTERM), _signal.SIG_DFL
# The same for the builtins (int, str, isinstance, print, …): the executor reads them from its own globals, which a
# job's `builtins.int = str` does not reach. (No module of the executor defines a name of the builtins: build.py
# checks.)
globals().update((k, v) for k, v in vars(builtins).items() if not k.startswith('_'))
WORKDIR = os.environ.get(SANDBOX_ENV['work_dir'], '/tmp/sandfleet-work-%d' % os.getpid())
# The job's code as a script in its working directory: its tracebacks (lines from linecache), __file__ and sys.argv[0]
# name it. Not written there: the working directory holds the request's files only.
MAIN_FILE = os.path.join(WORKDIR, 'main.py')
SCRATCH = [d for d in os.environ.get(SANDBOX_ENV['scratch'], '').split(':') if d]  # dirs emptied after each job
# Where a request's files may be written and fetched from: the work dir and the scratch dirs that hold files.
PLACES = [WORKDIR, *(d for d in SCRATCH if d != '/dev/mqueue')]

# Kinds of job besides the run of a program's code, by name (judge_job_process.py adds the judge's: a program run by
# exec, a function's call, a script given arguments), each `(code, compiled, stdin, files, spec, watch) -> (status,
# report)`.
KINDS = {}

# Each job's __main__ namespace and the lines of its source (for tracebacks), made once in each zygote: a job process
# gets them as its zygote left them (nothing a job did in its own copy reaches its zygote), and making them in each
# job process would cost copy-on-write faults in each.
MAIN, SOURCE = {}, []


def fresh_main():
    """A fresh `__main__` module as `python3 MAIN_FILE` has it, with `MAIN` its namespace (returned); `SOURCE` the lines
    of MAIN_FILE."""
    main = types.ModuleType('__main__')
    main.__builtins__, main.__file__, main.__cached__ = sys.modules['builtins'], MAIN_FILE, None
    sys.modules['__main__'], sys.argv = main, [MAIN_FILE]
    global MAIN
    MAIN = main.__dict__
    linecache.cache[MAIN_FILE] = (0, None, SOURCE, MAIN_FILE)  # mtime None: checkcache never drops it
    return MAIN


def fresh_stdin():
    """sys.stdin on fd 0, made while fd 0 is a pipe, so that it is the non-seekable stream a job's stdin is (a memfd
    there later, or nothing)."""
    r, w = os.pipe()
    saved = os.dup(0)
    os.dup2(r, 0)
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, 'r', closefd=False), encoding='utf-8')
    sys.stdin.seekable()
    os.dup2(saved, 0)
    for fd in (saved, r, w):
        os.close(fd)


def flush_and_die(signum, frame):
    """SIGTERM (the controller's, at the job's deadline): writes out what Python's streams hold, then dies of the
    signal, so a job that timed out keeps what it printed. Installed by each job process once its job has come (see
    handle_sigterm)."""
    for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            s.flush()
        except BaseException:
            pass
    _set_handler(signum, _SIG_DFL)
    _kill(os.getpid(), signum)


def default_sigterm():
    _set_handler(_SIGTERM, _SIG_DFL)


def handle_sigterm():
    """The job process's SIGTERM handler, set as its job comes (a spare still waiting dies of a SIGTERM at once). The
    processes the job forks get SIGTERM's default back, as a script's children have it: a handler in Python runs only
    between bytecodes, and a child stuck in C (one forked while another thread held a lock: multiprocessing's pool
    does, and terminates its workers with SIGTERM) would never die of it."""
    _set_handler(_SIGTERM, flush_and_die)
    os.register_at_fork(after_in_child=default_sigterm)


def finish():
    """What the interpreter does as a script ends, before it exits: joins the non-daemon threads, then runs the
    atexit handlers (multiprocessing's joins its children there)."""
    threading = sys.modules.get('threading')
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    atexit._run_exitfuncs()


def read_job():
    """The next job from the job pipe (fd 4), as the controller writes it (placement.job_bytes): (code, code object,
    stdin, files, nonce, wait_files, kind); None when the controller is gone. `kind`: None (the code runs), or (name,
    spec) of one of KINDS."""
    head = read_exactly(8)
    payload = None if head is None else read_exactly(int.from_bytes(head, 'little'))
    if payload is None:
        return None
    code, compiled, n, files, nonce, wait_files, kind = marshal.loads(payload)
    stdin = read_exactly(n)
    return None if stdin is None else (code, compiled, stdin, files, nonce, wait_files, kind)


def read_exactly(n):
    """`n` bytes of the job pipe (fd 4), read into one buffer (a job of megabytes is copied once); None at its end."""
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = os.readv(4, [view[got:]])
        if not k:
            return None
        got += k
    return buf


def child():
    """A job process: stdout, stderr, its report pipe and its job pipe are fds 1-4 already, its limits inherited or set
    by the controller; it blocks until the controller writes its job, runs it and exits."""
    os.setsid()
    os.closerange(5, 1 << 20)  # the zygote's socket and the pidfds of its other children
    job = read_job()
    if job is None:
        _exit(0)  # the controller is gone
    os.close(4)
    # Only now: a spare waiting for its job keeps SIGTERM's default, so one sent to it kills it at once, and the
    # controller, which checks a spare before giving it a job, never hands a job to a spare about to die.
    handle_sigterm()
    try:
        code, compiled, stdin, files, _, _, kind = job
        status, report = run_kind(code, compiled, stdin, files, kind)
        if report:
            _write(3, _dumps(report).encode())
        end_as_script()
    except BaseException as e:
        try:
            _write(3, _dumps({'type': type(e).__name__, 'message': str(e)}).encode())
        except Exception:
            pass
        status = 1
    _exit(status)


def run_kind(code, compiled, stdin, files, kind, watch=None):
    """Runs a job of its kind: its code (`kind` None), or (name, spec) of one of KINDS."""
    if kind is None:
        return run_job(code, compiled, stdin, files, watch)
    return KINDS[kind[0]](code, compiled, stdin, files, kind[1], watch)


def take_input(stdin, files):
    """What a job process does before its program runs: stdin on fd 0 (a memfd), the work dir its own, the request's
    files written there. The error report when the files could not all be written (the program does not run), else
    None."""
    if stdin:
        fd = os.memfd_create('stdin', 0)
        os.write(fd, stdin)
        os.lseek(fd, 0, 0)
        os.dup2(fd, 0)
        os.close(fd)
    os.chdir(WORKDIR)  # made empty by the controller after the last job
    try:
        write_files(WORKDIR, files, PLACES)
    except (ValueError, OSError) as e:
        return {'type': type(e).__name__, 'message': 'files: %s' % e}
    return None


def run_job(code, compiled, stdin, files, watch=None):
    """Runs the job's code (`compiled`: its code object, or None when it does not compile) in the fresh __main__: its
    exit status and, when it did not end well, its error report. `watch` (a reuse process's) is armed while the code
    runs."""
    failure = take_input(stdin, files)
    if failure is not None:  # the code does not run: the request's files are not all there
        return 1, failure
    SOURCE[:] = code.splitlines(True)
    gc.enable()
    status, report = 0, None
    try:
        if watch is not None:
            watch.armed = True
        exec(compiled or compile(code, MAIN_FILE, 'exec'), MAIN)
    except SystemExit as e:
        if watch is not None:
            watch.armed = False
        c = e.code
        if c is None:
            status = 0
        elif isinstance(c, int):
            status = c & 0xFF
        else:
            print(c, file=sys.stderr)
            status = 1
        if status:
            report = {'type': 'SystemExit', 'message': str(c)[:8192]}
    except BaseException as e:
        if watch is not None:
            watch.armed = False
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        text = ''.join(_format_exception(type(e), e, tb))
        try:
            sys.stderr.write(text)
        except Exception:
            pass
        report = {
            'type': type(e).__name__,
            'message': str(e)[:8192],
            'traceback': text[-8192:],
            'memory': isinstance(e, MemoryError),
        }
        status = 1
    if watch is not None:
        watch.armed = False
    flush_std()  # before threads are joined: output of a job that then hangs is in its pipes
    return status, report


def flush_std():
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except Exception:
            pass


def end_as_script():
    """What the interpreter does as a script ends: joins the non-daemon threads, runs the atexit handlers (finish), and
    writes out what the standard streams still hold."""
    finish()
    flush_std()
