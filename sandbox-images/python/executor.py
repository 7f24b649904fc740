#!/usr/bin/env python3
# Built by sandbox-images/python/build.py from sandfleet_sandbox/: sandbox_env, boot, libc, limits, frames, judge_frames, files, tamper_checks, seccomp, job_process, judge_job_process, tiers, reuse_c_state, reuse_denylist, reuse_process, reuse_handle, zygote_process, zygote_handle, cleanup, capture, results, runner_channel, job_run, placement, reuse_keeper, judge_run, controller.
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
The controller's parts: the runner's channel (runner_channel.py: frames in, parsed once into
their types by frames.py and judge_frames.py, and out), where a job runs (placement.py), its reuse
processes (reuse_keeper.py), one run from its watch to its result (job_run.py), a judge's runs from its
frame to its result (judge_run.py); this module holds them together: the one poll, the zygotes,
each frame's handler.
"""

# ---------------- sandfleet_sandbox/sandbox_env.py
# The environment the sandbox reads, every name once.
#
# SANDBOX_ENV: what the runner hands the executor and the session host, keyed as SANDBOX_ENV in
# services/runner/src/kits/executor/sandbox-env.ts keys it (snake_case here; python-package.test.ts holds the two tables
# equal). SANDBOX_KNOBS: settings of the sandbox's own that no driver sets (tests, benchmarks, an operator's image).

SANDBOX_ENV = {
    'work_dir': 'SANDFLEET_WORKDIR',
    'scratch': 'SANDFLEET_SCRATCH',
    'soft_stop_ms': 'SANDFLEET_SOFT_STOP_MS',
    'max_file_mb': 'SANDFLEET_MAX_FILE_MB',
    'max_procs': 'SANDFLEET_MAX_PROCS',
    'isolation': 'SANDFLEET_ISOLATION',
    'channel': 'SANDFLEET_CHANNEL',
    'seccomp': 'SANDFLEET_SECCOMP',
    'session_namespaces': 'SANDFLEET_SESSION_NAMESPACES',
}
SANDBOX_KNOBS = {
    'pipe_patience_ms': 'SANDFLEET_PIPE_PATIENCE_MS',
    'no_hugepages': 'SANDFLEET_NO_HUGEPAGES',
    'session_spare_idle_s': 'SANDFLEET_SESSION_SPARE_IDLE_S',
    'session_preload': 'SANDFLEET_SESSION_PRELOAD',
    'session_max_procs': 'SANDFLEET_SESSION_MAX_PROCS',
}


# ---------------- sandfleet_sandbox/boot.py
# The executor's start: it runs itself again, at once, in a fresh interpreter.
#
# A process that compiled the executor keeps the compiler's garbage in its heap, and each zygote
# forked from it would copy the entries of those pages at every fork, once per job. So the executor starts again in a
# fresh interpreter that runs the program's code object,
# unmarshalled from a memfd: nothing compiled there. First in `executor.py`, so that
# `sys._getframe().f_code` is the whole program's code; as a module of the package it does nothing.

import marshal
import os
import sys

_BOOT = (
    'import marshal, os, sys; fd = int(sys.argv.pop(1)); code = marshal.loads(os.pread(fd, os.fstat(fd).st_size, 0)); '
    'os.close(fd); exec(code, {"__name__": "__main__", "__file__": code.co_filename, '
    '"__builtins__": __builtins__, "FROM_CODE": True})'
)
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

try:
    LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:
    LIBC = None


def prctl(option, arg):
    if LIBC is not None:
        LIBC.prctl(option, arg, 0, 0, 0)


# ---------------- sandfleet_sandbox/limits.py
# What a job or a cell may use: memory, CPU time, file size, open files, processes. (Their per-job values come in the
# job's frame, as the runner resolved them: frames.py.)

import os


FSIZE = int(os.environ.get(SANDBOX_ENV['max_file_mb'], '64')) << 20
# RLIMIT_NPROC of a job; only meaningful in a user namespace of its own
NPROC = int(os.environ.get(SANDBOX_ENV['max_procs'], '0'))
NOFILE = 1024
PAGE = os.sysconf('SC_PAGE_SIZE')
# The soft stop: at its deadline a job's (or a cell's) process group gets SIGTERM, and this long to end, then SIGKILL. A
# handler of its own runs (it may print, clean up and exit); what it wrote comes back, with status timeout. The runner's
# drivers set it from GRACES.softStopMs.
SOFT_STOP_S = float(os.environ.get(SANDBOX_ENV['soft_stop_ms'], '500')) / 1000
# A job process runs this much nicer than its sandbox's controller and zygotes (its zygote sets it as it forks one): a
# job that keeps its sandbox's CPU quota busy (a fork bomb) still leaves the controller the time to stop it at its
# deadline and answer. The kernel holds it: a lower nice value takes CAP_SYS_NICE or an RLIMIT_NICE, and a job has
# neither; a higher one the tamper checks see.
JOB_NICE = 10
JOB_PRIORITY = min(19, os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICE)


def address_space(pages, memory_mb):
    """RLIMIT_AS for a process now `pages` pages large that may allocate `memory_mb` beyond that."""
    return pages * PAGE + memory_mb * 1048576


def cpu_backstop_s(timeout_ms):
    """RLIMIT_CPU's soft limit for a job of `timeout_ms`, in seconds past what its process used before it: a backstop
    past the controller's own stop at the deadline."""
    return timeout_ms // 1000 + 2


# ---------------- sandfleet_sandbox/frames.py
# The runner's frames that both programs take (the executor's `exec` jobs, the session host's cells and their
# `cell` options), parsed once where they come in: each kind a frozen type, its fields as the runner resolved them; and
# the readers of a frame's fields that every parser uses (the judge's, judge_frames.py, the executor's alone).
#
# The runner sends every field of a job, its defaults applied once, on its side (resolveExecRequest and the runner's
# settings; services/runner/src/kits/executor/executor-channel.ts writes the frames): nothing here defaults a field, and
# nothing after the parse reads a frame's dict. A frame that is not as docs/executor-protocol.md says is refused here
# (`FrameError`, naming the field): its program answers it, never runs it.
#
# A new kind of job is one more frozen type and its parser (here when both programs take it, else in a module of the
# program that does), its parser in the executor's table of ops (runner_channel.PARSERS), and its handler where the
# program dispatches (Controller.handlers in the executor).

import collections
import types


class FrameError(ValueError):
    """A frame refused at its parse: `message` says why; `frame_id` is its `id` when it had a usable one (its answer
    then names it), else None; `op` its op when it is one of PARSERS' (parse_frame sets it), else None."""

    def __init__(self, message, frame_id=None, op=None):
        super().__init__(message)
        self.frame_id = frame_id
        self.op = op


class ExecJob(
    collections.namedtuple(
        'ExecJob',
        (
            'id',
            'code',
            'stdin',
            'timeout_ms',
            'memory_mb',
            'files',
            'fetch_files',
            'max_output_bytes',
            'isolation',
            'wait_ms',
            'tenant',
        ),
    )
):
    """An `exec` frame: one job to run. `id` (the runner's, echoed in every frame about the job), `code`, `stdin`,
    `timeout_ms` (from the job's start: the soft stop, then the kill), `memory_mb` (beyond the process's size),
    `files` (path → base64, a read-only mapping), `fetch_files` (a tuple of paths), `max_output_bytes` (the cap of
    each of stdout and stderr), `isolation` (`fork` or `reuse`), `wait_ms` (what is left of the job's queue timeout,
    the most it may wait for a tier still warming; None: no limit), `tenant` (whose job it is; None: the one tenant
    of a fleet without API keys)."""

    __slots__ = ()


class CellOptions(collections.namedtuple('CellOptions', ('context', 'cwd', 'forget', 'env', 'main_key', 'stream'))):
    """A `cell` frame, which a session's runner sends just before a cell's `exec` (a sandbox's run): the code context
    it runs in (`context`: a key of the session's own, its globals made fresh the first time; None: the session's
    own), `cwd` (a new context's working directory, or None), `forget` (context keys dropped first, a tuple), `env`
    (set for this cell only, a read-only mapping), `main_key` (the display key that marks its value's display, or
    None) and `stream` (True: its output is sent as it comes, in `output` frames before its result, and an exception's
    traceback is its result's error alone, not written to its stderr)."""

    __slots__ = ()


ISOLATION_LEVELS = ('fork', 'reuse')


def field(frame, name):
    """Field `name` of frame `frame`; FrameError when it has none."""
    try:
        return frame[name]
    except KeyError:
        raise FrameError('no %s' % name, frame_id(frame)) from None


def frame_id(frame):
    """A frame's `id` when it is a string, else None (a refusal then names no job)."""
    value = frame.get('id')
    return value if type(value) is str else None


def text_of(frame, name):
    value = field(frame, name)
    if type(value) is not str:
        raise FrameError('%s is not a string' % name, frame_id(frame))
    return value


def count_of(frame, name, least):
    """An integer field of at least `least` (a bool is not one)."""
    value = field(frame, name)
    if type(value) is not int or value < least:
        raise FrameError('%s is not an integer of at least %d' % (name, least), frame_id(frame))
    return value


def isolation_of(frame):
    isolation = field(frame, 'isolation')
    if isolation not in ISOLATION_LEVELS:
        raise FrameError('isolation is not one of %s' % ', '.join(ISOLATION_LEVELS), frame_id(frame))
    return isolation


def wait_of(frame):
    """`wait_ms`: a number of at least 0, or None (no limit)."""
    wait_ms = field(frame, 'wait_ms')
    if wait_ms is not None and (type(wait_ms) not in (int, float) or not wait_ms >= 0):
        raise FrameError('wait_ms is not null or a number of at least 0', frame_id(frame))
    return wait_ms


def tenant_of(frame):
    tenant = field(frame, 'tenant')
    if tenant is not None and type(tenant) is not str:
        raise FrameError('tenant is not null or a string', frame_id(frame))
    return tenant


def exec_job(frame):
    """An `exec` frame's ExecJob."""
    files = field(frame, 'files')
    if type(files) is not dict or not all(type(k) is str and type(v) is str for k, v in files.items()):
        raise FrameError('files is not an object of path to base64 text', frame_id(frame))
    fetch = field(frame, 'fetch_files')
    if type(fetch) is not list or not all(type(p) is str for p in fetch):
        raise FrameError('fetch_files is not a list of paths', frame_id(frame))
    return ExecJob(
        text_of(frame, 'id'),
        text_of(frame, 'code'),
        text_of(frame, 'stdin'),
        count_of(frame, 'timeout_ms', 1),
        count_of(frame, 'memory_mb', 1),
        types.MappingProxyType(files),
        tuple(fetch),
        count_of(frame, 'max_output_bytes', 0),
        isolation_of(frame),
        wait_of(frame),
        tenant_of(frame),
    )


def optional_text(frame, name):
    """A field that is a string or null (None)."""
    value = field(frame, name)
    if value is not None and type(value) is not str:
        raise FrameError('%s is not null or a string' % name, frame_id(frame))
    return value


def cell_options(frame):
    """A `cell` frame's CellOptions."""
    forget = field(frame, 'forget')
    if type(forget) is not list or not all(type(k) is str for k in forget):
        raise FrameError('forget is not a list of context keys', frame_id(frame))
    env = field(frame, 'env')
    if type(env) is not dict or not all(type(k) is str and type(v) is str for k, v in env.items()):
        raise FrameError('env is not an object of names to strings', frame_id(frame))
    stream = field(frame, 'stream')
    if type(stream) is not bool:
        raise FrameError('stream is not a boolean', frame_id(frame))
    return CellOptions(
        optional_text(frame, 'context'),
        optional_text(frame, 'cwd'),
        tuple(forget),
        types.MappingProxyType(env),
        optional_text(frame, 'main_key'),
        stream,
    )


# ---------------- sandfleet_sandbox/judge_frames.py
# A judge's frames, parsed once where they come in (the executor's alone: the session host never judges): `judge`
# (its program, its checker and its tests each a frozen type of their own), and the runner's word on the judge that runs
# (`judge_ack`, `judge_stop`), taken by that judge rather than queued (runner_channel.WORDS). A judge's runs are jobs
# made here too, not parsed: `JudgeStep`. Fields are read as frames.py reads them, and refused as it refuses them.

import base64
import binascii
import collections



class JudgeProgram(
    collections.namedtuple('JudgeProgram', ('runtime', 'source', 'code', 'compile', 'output', 'run', 'binary'))
):
    """A judge's program, or its checker: `runtime` (`python`: compiled to bytecode in the controller; `binary`:
    compiled by a compiler, each run an exec), `source` (the file its code is written to for the compiler), `code`;
    for a binary, `compile` (the compiler's argv, a tuple; None when `binary` is given), `output` (the file the compiler
    writes, fetched back; None with `binary`), `run` (the binary's argv, a tuple) and `binary` (bytes: the runner's
    compile cache's, nothing is compiled; None: compile it). A Python program has None in all four."""

    __slots__ = ()


class JudgeCall(collections.namedtuple('JudgeCall', ('function', 'args'))):
    """A call test's call: the function (or `Solution()`'s method) named `function`, given the arguments in `args`
    (a JSON array, as text: decoded in the job process)."""

    __slots__ = ()


class JudgeTest(collections.namedtuple('JudgeTest', ('stdin', 'call'))):
    """One test of a judge: its `stdin`, and `call` (a JudgeCall; None: the program runs, reading stdin)."""

    __slots__ = ()


class JudgeJob(
    collections.namedtuple(
        'JudgeJob',
        (
            'id',
            'program',
            'checker',
            'answers',
            'tests',
            'timeout_ms',
            'memory_mb',
            'compile_timeout_ms',
            'compile_memory_mb',
            'checker_timeout_ms',
            'max_output_bytes',
            'stop_on_failure',
            'ack_window',
            'isolation',
            'tenant',
            'wait_ms',
        ),
    )
):
    """A `judge` frame: a program judged against its tests (docs/executor-protocol.md, "Judging"). `program` (a
    JudgeProgram), `checker` (a JudgeProgram, or None: the runner compares), `answers` (each test's expected output,
    a tuple, for the checker alone; None without one), `tests` (a tuple of JudgeTest), `timeout_ms` and `memory_mb`
    (each test's), `compile_timeout_ms` and `compile_memory_mb` (each compile's), `checker_timeout_ms` (each check's),
    `max_output_bytes` (the cap of each run's stdout and stderr), `stop_on_failure` (stop after a run that failed on
    its own terms), `ack_window` (how many tests may run past the last the runner acked; 0: no acks), `isolation`,
    `tenant` and `wait_ms` as an ExecJob's."""

    __slots__ = ()


class JudgeAck(collections.namedtuple('JudgeAck', ('id', 'index'))):
    """A `judge_ack` frame: the runner found test `index` of judge `id` passed."""

    __slots__ = ()


class JudgeStop(collections.namedtuple('JudgeStop', ('id',))):
    """A `judge_stop` frame: the runner found a test of judge `id` failed; no more of its tests run."""

    __slots__ = ()


class JudgeStep(collections.namedtuple('JudgeStep', ExecJob._fields + ('compiled', 'kind'))):
    """One run of a judge (a compile, a test, a check), made by the controller from its JudgeJob, not parsed: an
    ExecJob's fields (placement and the run read them alike; `id` the judge's), plus `compiled` (the code object of a
    Python program, compiled once for all its tests; None: no Python code runs) and `kind` (how its job process runs
    it: None, its code; or (name, spec) of one of job_process.KINDS, plain tuples that travel marshalled)."""

    __slots__ = ()


RUNTIMES = ('python', 'binary')


def texts_of(frame, name):
    """A field that is a list of strings, as a tuple."""
    value = field(frame, name)
    if type(value) is not list or not all(type(v) is str for v in value):
        raise FrameError('%s is not a list of strings' % name, frame_id(frame))
    return tuple(value)


class Part:
    """A part of frame `frame` (an object among its fields), read under the name `name` (`program`, `tests[3]`): its
    fields read as a frame's are, a refusal naming `name.field` and the frame's id."""

    def __init__(self, frame, name, value):
        if type(value) is not dict:
            raise FrameError('%s is not an object' % name, frame_id(frame))
        self.frame, self.name, self.value = frame, name, value

    def named(self, message):
        return FrameError('%s.%s' % (self.name, message), frame_id(self.frame))

    def __getitem__(self, key):
        try:
            return self.value[key]
        except KeyError:
            raise FrameError('no %s.%s' % (self.name, key), frame_id(self.frame)) from None


def part_field(part, name, check, what):
    """Field `name` of `part`, `check(value)` true of it; else refused as not `what`."""
    value = part[name]
    if not check(value):
        raise part.named('%s is not %s' % (name, what))
    return value


def is_argv(value):
    return type(value) is list and len(value) > 0 and all(type(v) is str for v in value)


def program_of(frame, name):
    """Field `name` of a `judge` frame as a JudgeProgram."""
    part = Part(frame, name, field(frame, name))
    runtime = part_field(part, 'runtime', lambda v: v in RUNTIMES, 'one of %s' % ', '.join(RUNTIMES))
    source = part_field(part, 'source', lambda v: type(v) is str, 'a string')
    code = part_field(part, 'code', lambda v: type(v) is str, 'a string')
    compile_argv = part_field(part, 'compile', lambda v: v is None or is_argv(v), 'null or a non-empty argv')
    output = part_field(part, 'output', lambda v: v is None or type(v) is str, 'null or a string')
    run = part_field(part, 'run', lambda v: v is None or is_argv(v), 'null or a non-empty argv')
    encoded = part_field(part, 'binary', lambda v: v is None or type(v) is str, 'null or base64 text')
    binary = None
    if encoded is not None:
        try:
            binary = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            raise part.named('binary is not base64 text') from None
    if runtime == 'python' and (compile_argv, output, run, binary) != (None, None, None, None):
        raise part.named('compile, output, run and binary are not null for a python program')
    if runtime == 'binary':
        if run is None:
            raise part.named('run is null for a binary program')
        if binary is None and (compile_argv is None or output is None):
            raise part.named('compile or output is null for a binary program that comes without its binary')
    return JudgeProgram(
        runtime,
        source,
        code,
        None if compile_argv is None else tuple(compile_argv),
        output,
        None if run is None else tuple(run),
        binary,
    )


def test_of(frame, index, value):
    """Test `index` of a `judge` frame as a JudgeTest."""
    part = Part(frame, 'tests[%d]' % index, value)
    stdin = part_field(part, 'stdin', lambda v: type(v) is str, 'a string')
    call = part_field(
        part,
        'call',
        lambda v: v is None or (type(v) is list and len(v) == 2 and all(type(x) is str for x in v)),
        'null or [function, arguments as JSON text]',
    )
    return JudgeTest(stdin, None if call is None else JudgeCall(call[0], call[1]))


def judge_job(frame):
    """A `judge` frame's JudgeJob."""
    program = program_of(frame, 'program')
    checker = None if field(frame, 'checker') is None else program_of(frame, 'checker')
    tests = field(frame, 'tests')
    if type(tests) is not list:
        raise FrameError('tests is not a list', frame_id(frame))
    tests = tuple(test_of(frame, i, t) for i, t in enumerate(tests))
    if program.runtime != 'python' and any(t.call is not None for t in tests):
        raise FrameError('tests: a call test of a program that is not python', frame_id(frame))
    answers = None
    if checker is None and field(frame, 'answers') is not None:
        raise FrameError('answers is not null for a judge without a checker', frame_id(frame))
    if checker is not None:
        answers = texts_of(frame, 'answers')
        if len(answers) != len(tests):
            raise FrameError('answers is not one string a test', frame_id(frame))
    stop_on_failure = field(frame, 'stop_on_failure')
    if type(stop_on_failure) is not bool:
        raise FrameError('stop_on_failure is not a boolean', frame_id(frame))
    return JudgeJob(
        text_of(frame, 'id'),
        program,
        checker,
        answers,
        tests,
        count_of(frame, 'timeout_ms', 1),
        count_of(frame, 'memory_mb', 1),
        count_of(frame, 'compile_timeout_ms', 1),
        count_of(frame, 'compile_memory_mb', 1),
        count_of(frame, 'checker_timeout_ms', 1),
        count_of(frame, 'max_output_bytes', 0),
        stop_on_failure,
        count_of(frame, 'ack_window', 0),
        isolation_of(frame),
        tenant_of(frame),
        wait_of(frame),
    )


def judge_ack(frame):
    """A `judge_ack` frame's JudgeAck."""
    return JudgeAck(text_of(frame, 'id'), count_of(frame, 'index', 0))


def judge_stop(frame):
    """A `judge_stop` frame's JudgeStop."""
    return JudgeStop(text_of(frame, 'id'))


# ---------------- sandfleet_sandbox/files.py
# A request's files: written before its code runs, read back after it (`fetch_files`). A path is relative to the work
# dir or absolute; either way it must lie in one of the sandbox's writable places (the work dir, /tmp, /mnt, /dev/shm),
# which the caller passes as `places`.

import base64
import os
import stat

FETCH_MAX_BYTES = 16 << 20  # a larger file is not returned (not cut either: a part of a file is not the file)


def place_of(base, path, places):
    """The real path of `path` (relative to directory `base`, or absolute), or ValueError naming it when that is not in
    one of `places`: a path outside them, or one that leads out of them through a link."""
    if '\0' in path:
        raise ValueError('%r holds a NUL byte' % path)
    asked = os.path.normpath(os.path.join(base, path))
    real = os.path.realpath(asked)
    roots = [os.path.realpath(p) for p in places]
    if any(real == r or real.startswith(r + '/') for r in roots):
        return real
    if any(asked == p or asked.startswith(p + '/') for p in places):
        raise ValueError('%r: a link leads out of the sandbox\'s writable places (%s)' % (path, ', '.join(places)))
    raise ValueError('%r is outside the sandbox\'s writable places (%s)' % (path, ', '.join(places)))


def write_files(base, files, places):
    """Writes `files` (path → base64); ValueError naming a path that is not in one of `places`, before it is written."""
    for path, b64 in files.items():
        real = place_of(base, path, places)
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, 'wb') as f:
            f.write(base64.b64decode(b64))


def fetch_files(base, wanted, places, limit=FETCH_MAX_BYTES):
    """The `wanted` files as ({path: base64}, {path: why not}). Only a regular file whose real path is in one of
    `places` (a link out of them, also through a linked directory such as /proc/self, is refused), opened without
    following a last link and without blocking (a FIFO is refused), of at most `limit` bytes; nothing outside them is
    opened. The caller sees to it that nothing swaps a path for a link meanwhile (the executor: nothing of the job is
    left; a session: the cell's own process reads, with the cell's own rights)."""
    files, errors = {}, {}
    for path in wanted or ():
        try:
            real = place_of(base, path, places)
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except ValueError as e:
            errors[path] = str(e)
            continue
        except FileNotFoundError:
            errors[path] = 'no such file'
            continue
        except IsADirectoryError:
            errors[path] = 'a directory'
            continue
        except OSError as e:
            errors[path] = 'not readable: %s' % (e.strerror or e)
            continue
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                errors[path] = 'a directory'
                continue
            if not stat.S_ISREG(st.st_mode):
                errors[path] = 'not a regular file'
                continue
            if st.st_size > limit:
                errors[path] = 'larger than %d bytes: not returned' % limit
                continue
            with open(fd, 'rb', closefd=False) as f:
                data = f.read(limit + 1)  # the file may have grown since fstat
            if len(data) > limit:
                errors[path] = 'larger than %d bytes: not returned' % limit
                continue
            files[path] = base64.b64encode(data).decode()
        except OSError as e:
            errors[path] = 'not readable: %s' % (e.strerror or e)
        finally:
            os.close(fd)
    return files, errors


# ---------------- sandfleet_sandbox/tamper_checks.py
# What an earlier job could have changed in the sandbox's other processes, read from outside them.
#
# Every process of a sandbox has one uid: a job can signal, renice or prlimit the zygotes, the spare
# job processes and the controller. The rlimits and scheduling each should have, taken at start-up
# before any job ran, catch that.

import itertools
import os
import resource


RLIMITS = tuple(getattr(resource, n) for n in dir(resource) if n.startswith('RLIMIT_'))


def threads(stat_fd):
    """The threads of the process whose /proc/PID/stat is open as `stat_fd` (a job's reuse process from inside, or from
    the controller)."""
    return int(os.pread(stat_fd, 1024, 0).rsplit(b')', 1)[1].split()[17])


def scheduling(pid=0):
    """A process's nice value, scheduling policy and CPU affinity: what a job could change in another process."""
    return os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid), os.sched_getaffinity(pid)


START = (tuple(map(resource.getrlimit, RLIMITS)), scheduling())
# A job process's scheduling: the sandbox's start, nicer (limits.JOB_NICE; its zygote sets it as it forks one).
SPARE_SCHEDULING = (JOB_PRIORITY, *START[1][1:])
# A spare job process as its zygote forked it: the sandbox's start, with the limits every zygote sets on itself.
SPARE_LIMITS = tuple(
    {resource.RLIMIT_NOFILE: (NOFILE, NOFILE), resource.RLIMIT_FSIZE: (FSIZE, FSIZE)}.get(r, lim)
    for r, lim in zip(RLIMITS, START[0])
)


# The limits the controller sets on a job process for each job: a reuse process holds the last job's, so only their hard
# limit is compared, with what a spare has or the controller set.
PER_JOB_RLIMITS = (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NPROC)


def tampered(pid, reused=False, expected=SPARE_SCHEDULING):
    """True when the rlimits of spare job process `pid` are not SPARE_LIMITS or its scheduling is not `expected` (a
    zygote's: START's): an earlier job changed them. Read from outside (prlimit), so the process itself runs nothing for
    it. A reuse process (`reused`) may hold the soft limits of its last job, and the processes' limit the controller
    set."""
    if scheduling(pid) != expected:
        return True
    now = tuple(map(resource.prlimit, itertools.repeat(pid, len(RLIMITS)), RLIMITS))
    if not reused:
        return now != SPARE_LIMITS
    return any(
        n[1] not in (e[1], per_job_hard(r)) if r in PER_JOB_RLIMITS else n != e
        for r, n, e in zip(RLIMITS, now, SPARE_LIMITS)
    )


def per_job_hard(r):
    """The hard limit the controller sets for each job on resource `r`, where it sets one (else None)."""
    return NPROC if r == resource.RLIMIT_NPROC and NPROC else None


def signalled(pid):
    """True when a signal is pending for spare job process `pid` (its own or its process's set), or it is gone."""
    try:
        fd = os.open('/proc/%d/status' % pid, os.O_RDONLY)
        try:
            status = os.read(fd, 4096)
        finally:
            os.close(fd)
    except OSError:
        return True
    for key in (b'\nSigPnd:', b'\nShdPnd:'):
        at = status.find(key)
        if at < 0 or int(status[at + len(key) : status.index(b'\n', at + 1)], 16):
            return True
    return False


def zygote_tampered(z):
    """True when zygote `z` (a zygote_handle.Zygote) is gone (killed, a zombie not reaped yet: its size reads 0), or,
    once it is warm, a job changed its limits or scheduling: every job process it forks would inherit them. Its limits
    are then a spare's (a spare gets its job's own from the controller)."""
    try:
        return int(os.pread(z.statm, 64, 0).split()[0]) == 0 or (z.warm and tampered(z.pid, expected=START[1]))
    except (OSError, ValueError, IndexError):
        return True


# What a job could lower in the controller to break it (a job runs nothing else in it: the other limits do not matter).
CONTROLLER_RLIMITS = (
    resource.RLIMIT_AS,
    resource.RLIMIT_CPU,
    resource.RLIMIT_DATA,
    resource.RLIMIT_NOFILE,
    resource.RLIMIT_STACK,
)
CONTROLLER_START = tuple(map(resource.getrlimit, CONTROLLER_RLIMITS))


def controller_tampered():
    """True when a job changed the controller's own limits or scheduling (its sandbox is then retired)."""
    return scheduling() != START[1] or tuple(map(resource.getrlimit, CONTROLLER_RLIMITS)) != CONTROLLER_START


# ---------------- sandfleet_sandbox/seccomp.py
# The runner's seccomp filter, added by the executor itself where the sandbox does not already have it.

import ctypes
import os



class SockFprog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]


def add_seccomp(program):
    """Adds a seccomp filter (a classic BPF program: struct sock_filter items of 8 bytes) on top of the ones this
    process has; every process forked after keeps it. The runner's own (SANDFLEET_SECCOMP, base64) where the sandbox
    does not already have it (a Docker container has Docker's default profile only). Raises when it cannot."""
    buf = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buf))
    if LIBC is None:
        raise OSError('no C library to add the seccomp filter with')
    # PR_SET_NO_NEW_PRIVS (the kernel's condition for an unprivileged filter), then PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    if LIBC.prctl(38, 1, 0, 0, 0) != 0 or LIBC.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'the seccomp filter was refused: %s' % os.strerror(ctypes.get_errno()))


# ---------------- sandfleet_sandbox/job_process.py
# A job process: forked by its zygote ahead of its job, it runs one job's code in a fresh `__main__` and exits.
#
# Everything a job process does is paid in copy-on-write faults, once per job: it does as little as
# it can, and imports nothing (what it uses is imported here, before the zygotes fork).

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


# ---------------- sandfleet_sandbox/judge_job_process.py
# The judge's kinds of job, inside the job process (registered in job_process.KINDS): a program run by exec (the
# compiler, named by its argv; or a compiled binary, from a sealed memfd no process can write), a function of the code
# called with JSON arguments (its return value reported as JSON), and a script given arguments (a Python checker's INPUT
# OUTPUT ANSWER). The controller's end of a judge is judge_run.py.
#
# Like the rest of the job process, it imports nothing once the zygotes have forked: what it uses is imported here.

import _signal
import fcntl
import json
import os
import signal
import sys


# memfd_create's flags and the seals of a binary's copy: nothing may write, grow or shrink it, or change its seals.
MFD_CLOEXEC = 1
MFD_ALLOW_SEALING = 2
F_ADD_SEALS = 1033
SEALED = 1 | 2 | 4 | 8  # F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_WRITE
# The signals the interpreter ignores and an exec'd program would inherit ignored: it gets their defaults, as a program
# a shell starts does (a write to a closed pipe, a file past its size limit, end it).
DEFAULT_SIGNALS = (int(signal.SIGPIPE), int(signal.SIGXFSZ))
# The longest return value of a call, as JSON: a longer one is not compared (the test fails).
RETURN_LIMIT = 1 << 18
# The call test's harness, run in the job's __main__ after its code: the call, its value kept there.
HARNESS = compile('__sandfleet_return__ = __sandfleet_call__()', '<judge>', 'exec')
_json_loads = json.loads
_json_dumps = json.dumps
# The judge's kinds, by the names its steps give them (judge_frames.JudgeStep.kind; judge_run.py makes them).
EXEC = 'exec'
CALL = 'call'
ARGV = 'argv'


def run_exec(code, compiled, stdin, files, spec, watch):
    """Execs the program of `spec`, (argv, binary): argv[0] looked up on PATH when `binary` is None, else `binary` run
    from a sealed memfd, argv[0] only its name. Returns (127, report) only when the exec failed; a program that runs
    ends this process with its own status. The report pipe (fd 3) closes at the exec: the program cannot write the
    report."""
    argv, binary = spec
    failure = take_input(stdin, files)
    if failure is not None:
        return 1, failure
    try:
        for sig in DEFAULT_SIGNALS:
            _signal.signal(sig, _signal.SIG_DFL)
        _signal.signal(int(signal.SIGTERM), _signal.SIG_DFL)
        os.set_inheritable(3, False)
        if binary is None:
            os.execvp(argv[0], argv)
        fd = os.memfd_create('main', MFD_CLOEXEC | MFD_ALLOW_SEALING)
        view = memoryview(binary)
        while view:
            view = view[os.write(fd, view) :]
        fcntl.fcntl(fd, F_ADD_SEALS, SEALED)
        os.execve(fd, argv, os.environ)
    except OSError as e:
        return 127, {'type': 'ExecFailed', 'message': '%s: %s' % (argv[0], e.strerror or e)}
    return 127, {'type': 'ExecFailed', 'message': argv[0]}


def caller(name, args):
    """The call of a call test: the function `name` of the job's __main__ (or, LeetCode's way, the method of a fresh
    `Solution()`), given `args`."""

    def call():
        main = sys.modules['__main__'].__dict__
        fn = main.get(name)
        if fn is None:
            cls = main.get('Solution')
            if cls is None:
                raise NameError('name %r is not defined' % name)
            fn = getattr(cls(), name)
        return fn(*args)

    return call


def run_call(code, compiled, stdin, files, spec, watch):
    """Runs the code, then calls its function with the arguments of `spec`, (name, arguments as JSON text); the report
    carries the return value as JSON (`returned`), or why it has none (`returned_error`: no JSON value, or too
    long)."""
    name, args = spec
    status, report = run_job(code, compiled, stdin, files, watch)
    if status:
        return status, report
    main = sys.modules['__main__'].__dict__
    main['__sandfleet_call__'] = caller(name, _json_loads(args))
    status, report = run_job(code, HARNESS, b'', {}, watch)
    value = main.pop('__sandfleet_return__', None)
    main.pop('__sandfleet_call__', None)
    if status:
        return status, report
    try:
        text = _json_dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        return 0, {'returned_error': 'not a JSON value: %s (%s)' % (repr(value)[:1000], e)}
    if len(text) > RETURN_LIMIT:
        return 0, {'returned_error': 'a value of %d bytes of JSON, over %d' % (len(text), RETURN_LIMIT)}
    return 0, {'returned': text}


def run_argv(code, compiled, stdin, files, spec, watch):
    """Runs the code as `python3 main.py ARGS` would: `sys.argv` its path and the arguments `spec` (a tuple)."""
    sys.argv = [MAIN_FILE, *spec]
    return run_job(code, compiled, stdin, files, watch)


KINDS.update({EXEC: run_exec, CALL: run_call, ARGV: run_argv})


# ---------------- sandfleet_sandbox/tiers.py
# The zygote tiers (what each preloads) and the choice of one for a job's code.
#
# `bare`: what the executor itself imports; `std`: plus the standard library jobs commonly import;
# `sym`: plus sympy and mpmath; `sci`: plus numpy and scipy too.

import re
import sys

# Two scientific tiers: a zygote's size is paid at every job forked from it (page-table entries copied and torn down,
# refcounts written), and numpy and scipy more than double sympy's (benchmarks/RESULTS.md, "Executor").
SYM = ('sympy', 'mpmath')
SCI = ('numpy', 'sympy', 'scipy', 'mpmath')
# The tiers a job that wants the first one can run on, best first: one that preloads what it imports, else a cheaper
# one.
FALLBACK = {
    'bare': ('bare',),
    'std': ('std', 'bare'),
    'sym': ('sym', 'sci', 'std', 'bare'),
    'sci': ('sci', 'sym', 'std', 'bare'),
}
# The standard library a job commonly imports and bare lacks: preloaded in `std`, not in `bare`, where every job would
# pay for them at its fork (benchmarks/RESULTS.md, "Executor").
STD = (
    'random',
    'fractions',
    'decimal',
    'statistics',
    'typing',
    'dataclasses',
    'datetime',
    'heapq',
    'bisect',
    'string',
    'copy',
    'itertools',
    'functools',
    'collections',
    'math',
    'operator',
    'array',
    'struct',
    'hashlib',
    'textwrap',
    'pprint',
)
STDLIB = frozenset(sys.stdlib_module_names) | {'', '__main__'}
STDLIB_AND_SYM = STDLIB | frozenset(SYM)
# `from M import x` (group 1: M; its `import` is consumed, so x is not taken for a module) or `import M [as a], ...`
# (group 2)
IMPORT_RE = re.compile(
    r'\bfrom\s+([\w.]+)\s+import\b|\bimport\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)'
)


def installed(name):
    """Whether package `name` can be imported here (found, not imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False


def plan_tiers():
    """Each tier this sandbox has and what it preloads: `sym` when sympy or mpmath is installed, `sci` when it would
    hold
    something `sym` lacks."""
    planned = {
        'bare': [],
        'std': list(STD),
        'sym': [n for n in SYM if installed(n)],
        'sci': [n for n in SCI if installed(n)],
    }
    if not planned['sym']:
        del planned['sym']
    if set(planned['sci']) <= set(planned.get('sym', [])):
        del planned['sci']
    return planned


def pick_tier(code, tiers, loaded):
    """The cheapest of the live `tiers` with what `code` imports: `bare` when all of it is in `loaded` (the top-level
    modules the bare zygote has), `std` when it is the standard library, `sym` when it is that and sympy or mpmath,
    `sci` otherwise (a tier that is not there falls back as FALLBACK says)."""
    if 'import' not in code:
        return 'bare'
    names = set()
    for source, group in IMPORT_RE.findall(code):
        if source:
            names.add(source.split('.')[0])
        else:
            names.update(part.split()[0].split('.')[0] for part in group.split(',') if part.strip())
    if '__import__' in code or 'import_module' in code:
        names.update(n for n in SCI if n in code)
    if 'lambdify' in code:
        names.add('numpy')  # sympy's lambdify imports numpy when it is installed
    want = 'bare' if names <= loaded else 'std' if names <= STDLIB else 'sym' if names <= STDLIB_AND_SYM else 'sci'
    for name in FALLBACK[want]:
        if name in tiers:
            return name
    return 'bare'


# ---------------- sandfleet_sandbox/reuse_c_state.py
# The C-level state of the extension modules the zygote tiers preload, for the `reuse` level's check.
#
# State kept in C (a module's globals in its C code, not in any Python dict) is invisible to the baseline's walk. Each
# item of it that a job can change is either read here, so that the check compares it before and after each job
# (`c_state`), or its setter is refused by `static_taint` (`REFUSED_NAMES`: code that names it runs forked). The census
# behind both lists, module by module and tier by tier, is docs/reuse-census.md; census_list.py lists the modules again.

import sys

# Setters of C-level state that the check does not read (no getter, or reading it is dear): code naming one runs forked.
REFUSED_NAMES = (
    # codecs: the interpreter's codec search functions and error handlers, which no getter lists ('register' is refused
    # already; `import codecs` too, but the module is an attribute of others: encodings.codecs)
    'unregister',
    'register_error',
    # abc: an ABC's registry and caches, emptied without moving the cache token that c_state reads
    '_abc_init',
    '_abc_register',
    '_reset_registry',
    '_reset_caches',
    # the import machinery's C half: modules made outside sys.modules, the frozen-module override, code objects'
    # file names, the import lock
    '_imp',
    # subprocess's C half: a child forked without the audit event that taints
    '_posixsubprocess',
    'fork_exec',
    '_fork_exec',
    'spawnv_passfds',
    # the C library's gettext bindings, one a domain (c_state reads the current domain)
    'bindtextdomain',
    'bind_textdomain_codeset',
    # a descriptor's blocking mode, which the process's own (stdout, stderr, report and job pipes) keep from job to job:
    # reading it costs a system call a descriptor after every job
    'set_blocking',
    # numpy: its C-level settings that have no getter, the docstrings of its C objects, its test module's hooks
    'set_string_function',
    'set_numeric_ops',
    'set_typeDict',
    'set_legacy_print_mode',
    'add_docstring',
    'add_newdoc',
    'add_newdoc_ufunc',
    '_add_newdoc_ufunc',
    '_multiarray_tests',
    # scipy: ARPACK's Fortran common blocks (the level and unit of its debug output), reached only by this module's name
    '_arpack',
)

# The C-level settings c_state reads: (module, its getter, the getter's arguments), each read when the module is loaded.
READ = (
    ('_abc', 'get_cache_token', ()),  # moves at every ABC registration, by any path
    ('_locale', 'textdomain', (None,)),  # the C library's gettext domain
    ('_socket', 'getdefaulttimeout', ()),  # every new socket's timeout
    ('numpy.core._multiarray_umath', '_get_madvise_hugepage', ()),  # huge pages for big arrays
    ('numpy.core._multiarray_umath', '_get_promotion_state', ()),  # NEP 50 type promotion
    ('numpy.random.mtrand', 'get_bit_generator', ()),  # the legacy global generator's bit generator
    ('scipy.special._ufuncs', 'geterr', ()),  # what special functions do on an error
)


def c_state():
    """The readings of READ, in its order (None for a module not loaded): equal before and after a job that changed none
    of it."""
    out, loaded = [], sys.modules.get
    for module, getter, args in READ:
        f = getattr(loaded(module), getter, None)
        out.append(f(*args) if f is not None else None)
    return out


# ---------------- sandfleet_sandbox/reuse_denylist.py
# The deny-list of what code may name to run in a reuse process: `static_taint` (the first name of it the code names,
# or None), read by the controller before it hands a job to one, and by the reuse process's audit hook at each compile
# while a job runs (reuse_process.Watch); `assigns_attributes`, after which the caches a job may have changed are
# emptied. Code it refuses runs forked: what it names the reuse check cannot follow. (A static scan of the text, not taint
# tracking: what a job reaches at run time is the audit hook's, reuse_process.TAINTS.)

import re


# Code that names one of these runs forked: what it reaches is not watched (C-level registries, soft rlimits) or is the
# executor's own (frames, code objects, attribute access by computed name, dynamic code). Dunder names are refused but
# those of ordinary classes and scripts; so is a private attribute, but on `self` or `cls`.
SAFE_DUNDERS = (
    'name',
    'main',
    'init',
    'new',
    'repr',
    'str',
    'format',
    'bytes',
    'bool',
    'hash',
    'len',
    'iter',
    'next',
    'reversed',
    'contains',
    'getitem',
    'setitem',
    'delitem',
    'missing',
    'call',
    'enter',
    'exit',
    'eq',
    'ne',
    'lt',
    'le',
    'gt',
    'ge',
    'add',
    'sub',
    'mul',
    'matmul',
    'truediv',
    'floordiv',
    'mod',
    'divmod',
    'pow',
    'lshift',
    'rshift',
    'and',
    'or',
    'xor',
    'radd',
    'rsub',
    'rmul',
    'rmatmul',
    'rtruediv',
    'rfloordiv',
    'rmod',
    'rdivmod',
    'rpow',
    'rlshift',
    'rrshift',
    'rand',
    'ror',
    'rxor',
    'iadd',
    'isub',
    'imul',
    'imatmul',
    'itruediv',
    'ifloordiv',
    'imod',
    'ipow',
    'ilshift',
    'irshift',
    'iand',
    'ior',
    'ixor',
    'neg',
    'pos',
    'abs',
    'invert',
    'complex',
    'int',
    'float',
    'index',
    'round',
    'trunc',
    'floor',
    'ceil',
    'doc',
    'slots',
    'post_init',
    'future',
    'all',
    'version',
    'annotations',
    'class_getitem',
    'set_name',
    'init_subclass',
    'match_args',
    'await',
    'aiter',
    'anext',
    'aenter',
    'aexit',
    'copy',
    'deepcopy',
    'sizeof',
    'getattr',
    'file',
)
# Modules whose import alone reaches what the check cannot follow (frames, objects by traversal, C memory, pickled
# callables, C-level registries, the process's hard limits).
STATIC_MODULES = frozenset(
    (
        'ctypes',
        '_ctypes',
        'gc',
        'inspect',
        'dis',
        'pdb',
        'bdb',
        'faulthandler',
        'tracemalloc',
        'code',
        'codeop',
        'importlib',
        'pkgutil',
        'runpy',
        'builtins',
        'imp',
        'zipimport',
        'site',
        'pickle',
        'cPickle',
        '_pickle',
        'marshal',
        'shelve',
        'copyreg',
        'dill',
        'cloudpickle',
        'weakref',
        '_weakref',
        'resource',
        'codecs',
        '_codecs',
    )
)
# Names that reach it wherever they appear: attributes by computed name, dynamic code, frames and code objects,
# functions and modules built by hand, finalizers, hooks, registries, limits and signals kept outside Python objects.
STATIC_NAMES = (
    'getattr',
    'setattr',
    'delattr',
    'vars',
    'globals',
    'locals',
    'eval',
    'exec',
    'breakpoint',
    'attrgetter',
    'methodcaller',
    'Formatter',
    'finalize',
    'FunctionType',
    'CodeType',
    'LambdaType',
    'MethodType',
    'ModuleType',
    'tb_frame',
    'f_back',
    'f_globals',
    'f_locals',
    'f_builtins',
    'f_code',
    'gi_frame',
    'gi_code',
    'cr_frame',
    'cr_code',
    'ag_frame',
    'ag_code',
    'co_code',
    'settrace',
    'setprofile',
    'register',
    'register_at_fork',
    'setrlimit',
    'prlimit',
    'siginterrupt',
    'set_wakeup_fd',
    'pthread_kill',
    'init_printing',
    'init_session',
    'set_global_settings',
    # Modules the check cannot follow reached without an import: by computed name in sys.modules, as another module's
    # attribute (numpy's ctypeslib, an array's ctypes), or through from-imports of them.
    'modules',
    'ctypes',
    'ctypeslib',
    'inspect',
    'importlib',
    'weakref',
    # Memory outside an object's bounds through public numpy calls.
    'as_strided',
    'stride_tricks',
    # The frames of the callers, walked by the standard library (the audit hook sees them too: Watch).
    'walk_stack',
    'extract_stack',
    'print_stack',
    'format_stack',
    'StackSummary',
    'capture_locals',
    'currentframe',
) + REFUSED_NAMES
# An attribute assigned or deleted: `x.y = …`, `x.y += …`, `del x.y`, but where x is `self` or `cls`, or decimal's
# context (`getcontext().prec = 50`: the job's own, a context variable of its run).
_ASSIGN_OP = r'\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)'
STATIC = re.compile(
    r'(?<!\w)(?:%s)(?!\w)|(?<!\w)__(?!(?:%s)__)\w+__|(?<!\bself)(?<!\bcls)\.\s*_(?!_)\w'
    r'|(?<!\bself)(?<!\bcls)(?<!getcontext\(\))\.\s*\w+%s|\bdel\s+(?!self\.|cls\.)[\w.]*\.\s*\w+'
    r'|\bimport\s+\(?\s*(?:\w+(?:\s+as\s+\w+)?\s*,\s*)*_(?!_)\w'  # a private name in an import list
    % ('|'.join(sorted(STATIC_NAMES, key=len, reverse=True)), '|'.join(SAFE_DUNDERS), _ASSIGN_OP)
)
# An attribute of `self` or `cls` assigned: the object may be one a cache handed out (a method called with it).
OWN_ATTRIBUTES = re.compile(r'\b(?:self|cls)\.\s*\w+%s|\bdel\s+(?:self|cls)\.' % _ASSIGN_OP)


def assigns_attributes(code):
    """Whether `code` may change an object a cache handed out (it assigns attributes of `self` or `cls`, the one kind of
    attribute assignment static_taint lets through): the caches are emptied after its job."""
    return isinstance(code, str) and OWN_ATTRIBUTES.search(code) is not None


def static_taint(code):
    """What in `code` keeps it from a reuse process (the text matched, or `import M`), or None: it may run there."""
    if not isinstance(code, str):
        return None
    m = STATIC.search(code)
    if m is not None:
        return m.group(0)[:64]
    if 'import' in code:
        for source, group in IMPORT_RE.findall(code):
            for name in [source] if source else [part.split()[0] for part in group.split(',') if part.strip()]:
                if name.split('.')[0] in STATIC_MODULES:
                    return 'import ' + name.split('.')[0]
    return None


# ---------------- sandfleet_sandbox/reuse_process.py
# The `reuse` isolation level: a job process that takes another job only when a check proves the last one left no
# trace.
#
# A reuse process is forked by its zygote like a spare, and runs one job after another. Its Baseline is everything a job
# could change: the interpreter's part (its settings, `sys.modules`, and the state reachable from every module within two
# steps: the dicts of modules, classes, functions and objects by their version tags, lists and sets by the identity of
# their items, locks and counters), taken once by the zygote and shared by every reuse process it forks, and the
# process's part (threads, children, descriptors, umask, rlimits, scheduling, signal handlers, mask, timers, process
# group), taken by each. After a job the process drops the job's objects, puts back what the job owns by design (the
# caches of RESET_DICTS, the counters of RESET_ATTRS, the warning filters, the random generators, lists that only grew)
# and checks the rest against the baseline: the first difference retires the process. What the check cannot see never
# reaches it: code that names it (`static_taint`, reuse_denylist.py; also applied to code compiled while a job runs)
# runs forked, and a call that reaches it while a job runs (TAINTS, seen by an audit hook no job can remove) makes the
# process end after that job as a forked one does: threads joined, atexit handlers run, exit. The controller checks from
# outside what a job in another process could do to it (rlimits, scheduling, pending signals), and holds what the process
# says to what it reads of it (reuse_handle.py). This module is the reuse process's own code; the controller runs none of
# it but `tags_work`.

import _functools
import _locale
import _signal
import _thread
import collections
import contextvars
import ctypes
import gc
import itertools
import operator
import os
import resource
import sys
import types


# Audit events that mean a job reached what the check cannot see, or that it ends as only a fork can (a thread or a
# child to join at its end): the process then ends after the job, as a forked one does. An attribute set or deleted
# where the dicts' tags do not see it (a function's code or defaults, a class's name or bases, an object's class) taints
# when its object is one the baseline watches; libraries do it to the objects they make for a job (namedtuple,
# dataclasses). Frames, code objects and functions built from them reach a job only through names static_taint refuses
# (a library builds them for its own ends: sympy's lambdify).
TAINTS = frozenset(
    (
        'sys._current_frames',
        'sys.settrace',
        'sys.setprofile',
        'sys.addaudithook',
        'gc.get_objects',
        'gc.get_referrers',
        'gc.get_referents',
        'gc.freeze',
        'gc.unfreeze',
        'os.putenv',
        'os.unsetenv',
        'os.fork',
        'os.forkpty',
        'os.system',
        'os.exec',
        'os.posix_spawn',
        'os.spawn',
        'subprocess.Popen',
        '_thread.start_new_thread',
        'pickle.find_class',
        'mmap.__new__',
        'sys.set_asyncgen_hook_firstiter',
        'sys.set_asyncgen_hook_finalizer',
        'os.register_at_fork',
        'signal.pthread_kill',
        'resource.setrlimit',
        'resource.prlimit',
        'os.kill',
        'os.killpg',
    )
)
TAINT_PREFIXES = ('ctypes.', 'fcntl.', 'socket.')

# Caches a job changes by using a module as intended: put back after each job as they were (a forked job finds its
# zygote's). A job reaches them to poison them only through a private name or `linecache`'s API, and the reset undoes
# it.
RESET_DICTS = (
    ('linecache', 'cache'),
    ('re', '_cache'),
    ('warnings', 'onceregistry'),
    ('sympy.polys.rings', '_ring_cache'),
    ('sympy.polys.fields', '_field_cache'),
    ('typing', '_caches'),
)
# Counters a job moves by making objects, set back after each job: (module, class or None for the module's own, name).
RESET_ATTRS = (
    ('sympy.core.symbol', 'Dummy', '_count'),
    ('sympy.utilities.lambdify', None, '_lambdify_generated_counter'),
)

MAX_JOBS = 5000  # a process retires after this many jobs (fragmentation; caches that only grow)
MAX_GROWTH = 96 << 20  # or once it holds this much more memory than at its baseline
_MISSING = object()
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None))
# PyDictObject: PyObject_HEAD, ma_used, then ma_version_tag, which every change of a dict moves (CPython 3.6-3.12;
# checked at start by tags_work, and the level is not offered where it does not hold).
_TAG_OFFSET = 2 * ctypes.sizeof(ctypes.c_void_p) + ctypes.sizeof(ctypes.c_ssize_t)
_COUNT = type(itertools.count())
_LOCKS = (type(_thread.allocate_lock()), type(_thread.RLock()))
_BOUND = (types.BuiltinMethodType, type(_COUNT().__next__))
_LRU = _functools._lru_cache_wrapper
_chain, _is_not = itertools.chain.from_iterable, operator.is_not
SIGNALS = tuple(s for s in range(1, _signal.NSIG) if not 32 <= s < _signal.SIGRTMIN)  # the C library's own aside
ITIMERS = (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF)


def tag_reader(d):
    """A live view of dict `d`'s version tag."""
    return ctypes.c_uint64.from_address(id(d) + _TAG_OFFSET)


_VALUE = operator.attrgetter('value')
_RAW = operator.attrgetter('raw')
# PyListObject: PyObject_VAR_HEAD (its size last), then ob_item, the array of its items' addresses.
_ITEMS_OFFSET = 3 * ctypes.sizeof(ctypes.c_void_p)


class ListWatch:
    """Lists by the identity of their items. Fast: a list holds what it held when it is as long, its item array is where
    it was and holds the same addresses (read in one copy per list, only once the first two hold). Else (an array that
    moved: a list put back by slice, grown and shrunk), item by item, and the array followed where it went."""

    def __init__(self, lists):
        self.lists = lists
        self.snaps = list(map(tuple, lists))
        self.lengths = list(map(len, lists))
        self.arrays = [ctypes.c_void_p.from_address(id(v) + _ITEMS_OFFSET) for v in lists]
        self.at = list(map(_VALUE, self.arrays))
        self.views = list(map(self.view, self.lengths, self.at))
        self.items = list(map(_RAW, self.views))

    @staticmethod
    def view(n, address):
        return (
            (ctypes.c_char * (n * ctypes.sizeof(ctypes.c_void_p))).from_address(address)
            if n
            else ctypes.create_string_buffer(0)
        )

    def cut_back(self):
        """Lists that only grew (a cache filled, an entry appended) cut back to what they held: as a forked job finds
        them."""
        if list(map(len, self.lists)) == self.lengths:
            return
        for v, n, snap in zip(self.lists, self.lengths, self.snaps):
            if len(v) > n and all(a is b for a, b in zip(v, snap)):
                del v[n:]

    def changed(self):
        """A list that no longer holds what it held, or None."""
        if list(map(len, self.lists)) != self.lengths:
            return next(v for v, n in zip(self.lists, self.lengths) if len(v) != n)
        if list(map(_VALUE, self.arrays)) == self.at and list(map(_RAW, self.views)) == self.items:
            return None
        for i, v in enumerate(self.lists):
            at = self.arrays[i].value
            if at == self.at[i] and self.views[i].raw == self.items[i]:
                continue
            if any(a is not b for a, b in zip(v, self.snaps[i])):
                return v
            self.at[i], self.views[i] = at, self.view(len(v), at)
        return None


_SLOTS = {}


def slot_descriptors(t):
    """The slots of instances of class `t` that code can assign: the member descriptors its classes declare with
    `__slots__` (a C type's members are not slots of this kind). Read and written through the descriptor itself: a
    subclass may hide the name behind a property (mpmath's constants do)."""
    found = _SLOTS.get(t)
    if found is None:
        found = _SLOTS[t] = tuple(
            d
            for k in t.__mro__
            if '__slots__' in k.__dict__
            for d in k.__dict__.values()
            if type(d) is types.MemberDescriptorType  # noqa: E721 (the exact type: a job's class can lie in isinstance)
        )
    return found


class SlotWatch:
    """The slots of the watched objects, by the identity of their values: after each job, put back as they were (a
    forked job finds them so). Fast: each slot of a class read over all its objects by one map of its descriptor, and
    one identity comparison of all the values; object by object only where something moved."""

    def __init__(self, slotted):
        self.groups = []  # (descriptor, the objects in which that slot was set)
        for t, objs in slotted.items():
            for d in slot_descriptors(t):
                self.groups.append((d, [o for o in objs if slot_value(d, o) is not _MISSING]))
        self.snaps = [list(map(d.__get__, objs)) for d, objs in self.groups]
        self.flat = list(_chain(self.snaps))

    def put_back(self):
        try:
            now = list(_chain(list(map(d.__get__, objs)) for d, objs in self.groups))
            if not any(map(_is_not, now, self.flat)):
                return
        except AttributeError:
            pass  # a slot deleted
        for (d, objs), snap in zip(self.groups, self.snaps):
            for o, was in zip(objs, snap):
                if slot_value(d, o) is not was:
                    d.__set__(o, was)


def slot_value(d, o):
    try:
        return d.__get__(o)
    except AttributeError:
        return _MISSING


def tags_work():
    """True when this interpreter moves a dict's version tag on every change, and only then (the check relies on it)."""
    d = {'a': 0}
    t = tag_reader(d)
    seen = [t.value]
    d['a'] = 1
    seen.append(t.value)
    d['b'] = 2
    seen.append(t.value)
    del d['a']
    seen.append(t.value)
    _ = d.get('b')
    seen.append(t.value)
    return len(set(seen[:4])) == 4 and seen[4] == seen[3]


TAGS_WORK = tags_work()


def same(d, snap):
    """Whether dict `d` holds what `snap` held: the same keys, each bound to the same object (or an equal number or
    string, put back by the job)."""
    if len(d) != len(snap):
        return False
    for k, v in snap.items():
        now = d.get(k, _MISSING)
        if now is not v and not (type(now) is type(v) and type(v) in _IMMUTABLE and now == v):
            return False
    return True


def proc_fds():
    """This process's descriptors: number → (device, inode); the listing's own is gone when it is compared."""
    fds = {}
    for name in os.listdir('/proc/self/fd'):
        try:
            st = os.fstat(int(name))
        except OSError:
            continue
        fds[int(name)] = (st.st_dev, st.st_ino)
    return fds


def same_fds(fds):
    """Whether each descriptor of `fds` (number → (device, inode)) is still open on the same file."""
    for fd, was in fds.items():
        try:
            st = os.fstat(fd)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != was:
            return False
    return True


def rss():
    with open('/proc/self/statm', 'rb') as f:
        return int(f.read().split()[1]) * PAGE


def knobs():
    """The interpreter's settings a job can change without a dict: limits, hooks, the collector, the standard streams,
    the C locale, and those of decimal and numpy when loaded."""
    out = [
        sys.getrecursionlimit(),
        sys.getswitchinterval(),
        sys.get_int_max_str_digits(),
        sys.getdlopenflags(),
        sys.gettrace(),
        sys.getprofile(),
        tuple(sys.get_asyncgen_hooks()),
        sys.get_coroutine_origin_tracking_depth(),
        gc.isenabled(),
        gc.get_threshold(),
        gc.get_debug(),
        _thread.stack_size(),
        _locale.setlocale(_locale.LC_ALL, None),
        os.getpgrp(),
        os.getsid(0),
    ]
    for s in (sys.stdin, sys.stdout, sys.stderr):
        try:
            out.append((id(s), s.closed, s.encoding, s.errors, s.line_buffering, s.write_through))
        except (AttributeError, ValueError):
            out.append((id(s), 'unreadable'))  # detached, or not a text stream
    decimal = sys.modules.get('decimal')
    if decimal is not None:
        out += [repr(decimal.DefaultContext), repr(decimal.BasicContext), repr(decimal.ExtendedContext)]
    np = sys.modules.get('numpy')
    if np is not None:
        out += [np.geterr(), np.getbufsize(), np.geterrcall(), np.get_printoptions()]
    out += c_state()
    return out


def reseed_at_fork():
    """What a fork does to the random generators: `random` reseeds its own, the zygotes reseed sympy's and numpy's."""
    random = sys.modules.get('random')
    if random is not None:
        random.seed()
    m = sys.modules.get('sympy.core.random')
    if m is not None and hasattr(m, 'seed'):
        m.seed()
    m = sys.modules.get('numpy.random')
    if m is not None:
        m.seed()


def reseeded_at_fork():
    """The generators reseed_at_fork reseeds (their state is not put back)."""
    out = [
        getattr(sys.modules.get('random'), '_inst', None),
        getattr(sys.modules.get('sympy.core.random'), 'rng', None),
    ]
    return {id(g) for g in out if g is not None}


class Baseline:
    """Everything a job could change, as the reuse process had it before its first job; `check` after each. Taken in
    two parts: the interpreter's (the walk: tens of ms and ~10 MiB on the scientific tiers), once, in the zygote
    (take_baseline), shared by every reuse process it forks, which then `adopt`s it: its own process's part."""

    def __init__(self):
        warnings = sys.modules.get('warnings')
        self.warnings = (warnings, list(warnings.filters)) if warnings is not None else None
        self.reset_dicts = [
            d for d in (getattr(sys.modules.get(m), n, None) for m, n in RESET_DICTS) if type(d) is dict
        ]
        self.reset_snaps = [dict(d) for d in self.reset_dicts]
        owners = (
            (sys.modules.get(m) if c is None else getattr(sys.modules.get(m), c, None), n) for m, c, n in RESET_ATTRS
        )
        self.reset_attrs = [
            (o, n, o.__dict__[n]) for o, n in owners if isinstance(o, (type, types.ModuleType)) and n in o.__dict__
        ]
        self.watch()

    def adopt(self):
        """The process's part, in the reuse process itself, before its first job."""
        self.pid = os.getpid()
        # kept open, read again with pread: its thread count (/proc/self/stat's 20th field) and its children
        self.stat = os.open('/proc/self/stat', os.O_RDONLY)
        self.children = os.open('/proc/self/task/%d/children' % self.pid, os.O_RDONLY)
        self.fds = proc_fds()
        self.umask = os.umask(0o077)
        os.umask(self.umask)
        self.rlimits = {r: resource.getrlimit(r) for r in RLIMITS}
        self.sched = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), os.sched_getaffinity(0))
        self.handlers = [_signal.getsignal(s) for s in SIGNALS]
        self.mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, [])
        self.atexits = __import__('atexit')._ncallbacks()
        self.rss, self.jobs = rss(), 0
        self.knobs = knobs()
        return self

    def watch(self):
        """Takes the reachable state: each module's dict, and within two steps of it the dicts (by version tag) and the
        slots of objects (their values, by identity), lists, sets, bytearrays (by their items), locks and counters; and
        the state of the random generators. A dict held under a name that says it is a cache is not checked: a job
        changes its entries only through a private name (refused) or a method of its own class; it is put back, as are
        the slots and the caches kept in C (functools' lru_cache, sympy's), after a job that assigned attributes
        (put_back)."""
        dicts, self.lists, self.sets, self.locks, self.counters, self.generators = [], [], [], [], [], []
        self.caches, slotted, self.arrays = {}, {}, []  # id → cache_clear; type → [objects]; (array, its bytes)
        self.cache_dicts = []  # (a dict held as a cache, its contents at the baseline)
        ndarray = getattr(sys.modules.get('numpy'), 'ndarray', ())
        # every object visited: the modules, classes, functions and objects whose attributes the watch takes
        self.owners = seen = (
            {id(d) for d in self.reset_dicts} | {id(sys.modules)} | {id(m) for m in sys.modules.values()}
        )
        random = sys.modules.get('random')
        Random, skip = (random.Random if random is not None else ()), reseeded_at_fork()

        # Breadth first: each object is taken at the least depth it is found at (a depth-first walk that met it deep
        # down first would not look inside it again).
        later = collections.deque()

        def visit(v, depth, name=None):
            if id(v) in seen:
                return
            seen.add(id(v))
            t = type(v)
            if t is dict or (t not in _IMMUTABLE and isinstance(v, dict)):  # its subclasses too (defaultdict, …)
                if type(name) is str and 'cache' in name.lower():
                    self.cache_dicts.append((v, dict(v)))
                    return
                dicts.append(v)
                if depth < 2:
                    later.extend((x, depth + 1, k) for k, x in list(v.items()))
            elif t is list:
                self.lists.append(v)
            elif t is set or t is bytearray:
                self.sets.append((v, t(v)))
            elif t in _LOCKS:  # one free at the baseline (a running thread's own is held by design)
                if not (v.locked() if hasattr(v, 'locked') else v._is_owned()):
                    self.locks.append(v)
            elif t is _COUNT:
                self.counters.append((v, repr(v)))
            elif t in _BOUND:
                if type(getattr(v, '__self__', None)) is _COUNT:
                    visit(v.__self__, depth)
            elif isinstance(v, type):
                real = gc.get_referents(v.__dict__)
                if real and type(real[0]) is dict:
                    visit(real[0], depth)
            elif isinstance(v, types.ModuleType):
                pass  # watched as one of sys.modules
            elif t is _LRU:
                self.caches[id(v)] = v.cache_clear
            elif t is ndarray:  # a module's array: its bytes (a job writes into it in place)
                if v.flags.writeable and v.nbytes <= 1 << 20:
                    self.arrays.append((v, v.tobytes()))
            else:
                descriptors = slot_descriptors(t)
                if descriptors:
                    slotted.setdefault(t, []).append(v)
                    if depth < 2:
                        for d in descriptors:
                            x = slot_value(d, v)
                            if x is not _MISSING:
                                later.append((x, depth + 1, d.__name__))
                if t is _functools.partial:
                    later.append((v.keywords, depth + 1, 'keywords'))
                if Random and isinstance(v, Random) and id(v) not in skip:
                    try:
                        self.generators.append((v, v.getstate()))
                    except NotImplementedError:
                        pass  # SystemRandom: no state
                # A thread-local's attributes are in its thread's dict, which only its own lookup gives.
                try:
                    d = v.__dict__ if isinstance(v, _thread._local) else object.__getattribute__(v, '__dict__')
                except Exception:
                    d = None
                if type(d) is dict:
                    if callable(d.get('cache_clear')) and isinstance(v, types.FunctionType):
                        self.caches[id(v)] = d['cache_clear']  # sympy's cacheit
                    visit(d, depth)

        self.modules = dict(sys.modules)
        for m in list(self.modules.values()):
            d = getattr(m, '__dict__', None)
            if type(d) is dict:
                later.append((d, 0, None))
        while later:
            visit(*later.popleft())
        cached = getattr(sys.modules.get('sympy.core.cache'), 'CACHE', ())  # sympy's cacheit: every wrapper it made
        self.caches.update((id(w), w.cache_clear) for w in cached if callable(getattr(w, 'cache_clear', None)))
        self.lists = ListWatch(self.lists)
        self.slots = SlotWatch(slotted)
        self.caches = list(self.caches.values())
        # Dicts empty at the baseline (most: the functions') are held empty, cheaper than by their tags.
        self.empties = [d for d in dicts if not d]
        dicts = [d for d in dicts if d]
        self.dicts = dicts
        self.snaps = [dict(d) for d in dicts]
        self.readers = [tag_reader(d) for d in dicts]
        self.tags = [r.value for r in self.readers]
        self.reset_readers = [tag_reader(d) for d in self.reset_dicts]
        self.reset_tags = [r.value for r in self.reset_readers]
        self.modules_tag = tag_reader(sys.modules)
        self.modules_at = self.modules_tag.value

    def put_back(self, assigned=False):
        """What the job owns by design, put back as a forked job finds it: the caches, the class counters, the warning
        filters, the generators' states, the lists that only grew; after a job that assigned attributes (of `self` or
        `cls`: no other kind runs here, see static_taint), the slots of the watched objects, and the caches kept in C
        emptied (what they handed out may be what it changed). (Before the check: it compares what these touch with
        the baseline.)"""
        for i, r in enumerate(self.reset_readers):
            if r.value != self.reset_tags[i]:
                d = self.reset_dicts[i]
                d.clear()
                d.update(self.reset_snaps[i])
                self.reset_tags[i] = r.value
        for owner, name, value in self.reset_attrs:
            if owner.__dict__.get(name, _MISSING) is not value:
                setattr(owner, name, value)
        if self.warnings is not None and self.warnings[0].filters != self.warnings[1]:
            self.warnings[0].filters[:] = self.warnings[1]
            self.warnings[0]._filters_mutated()
        for gen, state in self.generators:
            gen.setstate(state)
        self.lists.cut_back()
        if assigned:
            self.slots.put_back()
            for clear in self.caches:
                clear()  # what they handed out to the job is no later job's
            for d, snap in self.cache_dicts:
                if not same(d, snap):
                    d.clear()
                    d.update(snap)

    def check(self, main, main_refs):
        """None when the process is as its baseline; else (what, detail): the first difference found."""
        if threads(self.stat) != 1:
            return 'thread', 'a thread is left'
        if os.pread(self.children, 64, 0).strip():
            return 'child', 'a child process is left'
        if proc_fds() != self.fds:
            return 'descriptors', 'the open descriptors changed'
        if os.umask(self.umask) != self.umask:
            return 'umask', 'the umask changed'
        for r, (soft, hard) in self.rlimits.items():
            now = resource.getrlimit(r)
            if r == resource.RLIMIT_NPROC and NPROC:
                hard = NPROC
            if now[1] != hard or (r not in PER_JOB_RLIMITS and now[0] != soft):
                return 'rlimit', 'rlimit %d changed' % r
        if (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), os.sched_getaffinity(0)) != self.sched:
            return 'scheduling', 'the scheduling changed'
        for s, h in zip(SIGNALS, self.handlers):
            if _signal.getsignal(s) is not h:
                return 'signal', 'the handler of signal %d changed' % s
        if _signal.pthread_sigmask(_signal.SIG_BLOCK, []) != self.mask:
            return 'signal', 'the signal mask changed'
        if any(_signal.getitimer(t) != (0.0, 0.0) for t in ITIMERS):
            return 'signal', 'a timer is set'
        if __import__('atexit')._ncallbacks() != self.atexits:
            return 'atexit', 'an atexit handler is left'
        if self.modules_tag.value != self.modules_at:
            new = sys.modules.keys() - self.modules.keys()
            if new:
                return 'import', 'imported ' + min(new)
            if not same(sys.modules, self.modules):
                return 'modules', 'sys.modules changed'
            self.modules_at = self.modules_tag.value
        if knobs() != self.knobs:
            return 'setting', 'an interpreter setting changed'
        if any(map(len, self.empties)):
            return 'state', 'changed: ' + describe(next(d for d in self.empties if d))
        tags = list(map(_VALUE, self.readers))
        if tags != self.tags:
            for i, (now, then) in enumerate(zip(tags, self.tags)):
                if now == then:
                    continue
                d, snap = self.dicts[i], self.snaps[i]
                if '__warningregistry__' in d and '__warningregistry__' not in snap:
                    del d['__warningregistry__']
                if not same(d, snap):
                    return 'state', 'changed: %s: %s' % (describe(d), ', '.join(map(str, changed_keys(d, snap)))[:80])
                self.tags[i] = self.readers[i].value
        moved = self.lists.changed()
        if moved is not None:
            return 'state', 'a list changed: ' + repr(moved[:3])[:80]
        if any(v != snap for v, snap in self.sets):
            return 'state', 'a set or bytearray changed'
        if any(a.tobytes() != b for a, b in self.arrays):
            return 'state', 'an array a module holds changed'
        for lock in self.locks:
            if lock.locked() if hasattr(lock, 'locked') else lock._is_owned():
                return 'lock', 'a lock is held'
        if any(repr(c) != r for c, r in self.counters):
            return 'counter', 'a counter moved'
        if sys.getrefcount(main) - 1 != main_refs:
            return 'object', 'an object of the job is left'  # - 1: this frame's
        self.jobs += 1
        if self.jobs >= MAX_JOBS:
            return 'jobs', 'ran %d jobs' % self.jobs
        if rss() - self.rss > MAX_GROWTH:
            return 'memory', 'grew by %d MiB' % ((rss() - self.rss) >> 20)
        return None

    def retake(self, touched):
        """After the process prepared its next job (which changes dicts of its own: sys, sys.modules, the caches), the
        tags of those it touched, `touched` being their indexes."""
        tags, readers = self.tags, self.readers
        for i in touched:
            tags[i] = readers[i].value
        for i, r in enumerate(self.reset_readers):
            self.reset_tags[i] = r.value
        self.modules_at = self.modules_tag.value
        self.knobs = knobs()


TAKEN = []  # the zygote's baseline, once taken


# Standard library modules that compile code they generate from identifiers (dataclass fields, namedtuple fields, …),
# never from a job's text: what they compile is not held to static_taint (it names dunders by design).
GENERATORS = tuple(
    os.sep + p for p in ('dataclasses.py', os.path.join('collections', '__init__.py'), 'typing.py', 'enum.py')
)


def compiled_by_generator():
    """Whether the code the audit hook was called for is compiled by one of GENERATORS (the caller of compile(), three
    frames up: this function, Watch.judge, Watch.hook)."""
    f = sys._getframe(3)
    return f is not None and f.f_code.co_filename.endswith(GENERATORS)


def take_baseline():
    """The baseline of this zygote's interpreter, taken as it warms (the runner's default level is reuse) or when a
    reuse
    process is first asked for; every reuse process forked after inherits it. Frozen, so that no collection walks it."""
    if not TAKEN:
        TAKEN.append(Baseline())
        gc.collect()
        gc.freeze()
    return TAKEN[0]


def changed_keys(d, snap):
    """The keys whose binding differs between dict `d` and its snapshot (the first few)."""
    return [k for k in list(d.keys() | snap.keys()) if d.get(k, _MISSING) is not snap.get(k, _MISSING)][:3]


def describe(d):
    """A watched dict's owner, for a retirement's detail: a module's name, else its first keys."""
    name = d.get('__name__')
    return name if isinstance(name, str) else ','.join(map(str, list(d)[:3]))[:64]


class Watch:
    """The audit hook of a reuse process, armed while a job's code runs: the first event of TAINTS, or code compiled
    that static_taint refuses, is written at once to the report pipe (a line `T<event>` that nothing the job does can
    take back) and ends the process after that job. A job's own limits stay its own: raising its address space or CPU
    time fails as it does in a forked job, whose hard limits they are."""

    def __init__(self):
        self.armed, self.taint, self.owners, self.inside = False, None, frozenset(), False
        self.assigned = False  # code compiled while the job ran assigns attributes of self or cls (assigns_attributes)
        sys.addaudithook(self.hook)

    def hook(self, event, args):
        if not self.armed or self.inside:
            return  # not the events its own work raises (its look at the compiler's caller)
        self.inside = True
        try:
            self.judge(event, args)
        finally:
            self.inside = False

    def judge(self, event, args):
        if event in ('resource.setrlimit', 'resource.prlimit'):
            r, limits = args[-2:]
            if r in PER_JOB_RLIMITS[:2] and limits is not None:
                soft = resource.getrlimit(r)[0]
                if any(x < 0 or x > soft for x in limits):
                    raise ValueError('not allowed to raise maximum limit')
        if self.taint is not None:
            return
        if event in TAINTS or event.startswith(TAINT_PREFIXES):
            self.mark(event)
        # A module imported (CPython raises the event only for one not in sys.modules): what it holds in C the check
        # does not read, and the job could take it out of sys.modules again.
        elif event == 'import':
            self.mark('import of %s' % args[0])
        elif event in ('object.__setattr__', 'object.__delattr__') and id(args[0]) in self.owners:
            self.mark(event)
        elif event == 'open' and (type(args[0]) is int or str(args[0]).startswith(('/proc/', '/dev/fd'))):
            self.mark('open of a descriptor')
        # A frame of the executor's own code reached: one a job's code asked for (sys._getframe deep enough), or one a
        # walk of the callers' frames read (the standard library's, traceback's with captured locals among them, read
        # each frame's code). Its locals hold the process's state: from here on, nothing it says is its loop's.
        elif event == 'sys._getframe' and id(args[0].f_globals) in OWN_GLOBALS:
            self.mark('a frame of the executor')
        elif (
            event == 'object.__getattr__'
            and args[1] == 'f_code'
            and type(args[0]) is types.FrameType  # noqa: E721 (the exact type: a job's class can lie in isinstance)
            and id(args[0].f_globals) in OWN_GLOBALS
        ):
            self.mark('a frame of the executor')
        elif event == 'compile' and not compiled_by_generator():
            text = args[0].decode('utf-8', 'replace') if type(args[0]) is bytes else args[0]
            if static_taint(text) is not None:
                self.mark('compile')
            elif assigns_attributes(text):
                self.assigned = True

    def mark(self, event):
        self.taint = event
        try:
            _write(3, b'\nT%s\n' % event.encode())
        except OSError:
            pass


# The executor's own module namespaces (one in the built executor.py, one a module in the package): a frame whose
# globals are one of them runs the executor's code.
OWN_GLOBALS = frozenset(map(id, (globals(), run_job.__globals__)))


def reuse_child():
    """A reuse process: its baseline, then a job at a time, each followed by the check; it exits when one fails.

    Lines on the report pipe (fd 3), each after a newline: `R` (baseline taken, ready), `D{nonce, status, report}` (the
    job is done; the controller answers it with a byte on the job pipe once it has read the job's files),
    `V{nonce, retire}` (the check's verdict: null, or [what, detail]), `T<event>` (tainted), `E{report}` (a tainted
    job's error report: it ends as a forked one, by its exit status)."""
    os.setsid()
    # as its zygote sets it (limits.JOB_NICE), before the baseline reads it: whichever of the two comes first
    os.setpriority(os.PRIO_PROCESS, 0, JOB_PRIORITY)
    os.closerange(5, 1 << 20)  # the zygote's socket and the pidfds of its other children
    null = os.open('/dev/null', os.O_RDWR)
    stdio = [os.dup(fd) for fd in (0, 1, 2)]  # fd 0 as its zygote left it; fds 1 and 2, put back after the clean-up
    handle_sigterm()
    gc.enable()  # as in every job (the zygote keeps its collector off)
    watch = Watch()
    base = take_baseline().adopt()
    watch.owners = base.owners
    # the descriptors this process needs: a job may not take them
    own = {fd: base.fds[fd] for fd in (3, 4, null, *stdio)}
    main, touched = prepare(base, stdio, None)
    main_refs = sys.getrefcount(main)
    context = contextvars.copy_context()
    gc.collect()
    gc.freeze()  # the baseline's own objects are never garbage: the collector skips them after each job
    _write(3, b'\nR\n')
    while True:
        job = read_job()
        if job is None:
            _exit(0)  # the controller is gone
        code, compiled, stdin, files, nonce, wait_files, kind = job
        watch.assigned = assigns_attributes(code)
        status, report = context.copy().run(run_in_context, code, compiled, stdin, files, kind, watch)
        if watch.taint is None:
            if not same_fds(own):
                watch.mark('descriptors of its own closed or replaced')
            elif threads(base.stat) > 1 or __import__('atexit')._ncallbacks() != base.atexits:
                watch.mark('a thread or an atexit handler to finish')
        if watch.taint is not None:  # it ends as a forked job ends: threads joined, atexit handlers run, exit
            try:
                if report:
                    _write(3, b'\nE' + _dumps(report).encode() + b'\n')
            except OSError:
                pass
            end_as_script()
            _exit(status)
        os.dup2(stdio[0], 0)  # a job's stdin is its own
        try:
            _write(3, b'\nD' + _dumps({'nonce': nonce, 'status': status, 'report': report}).encode() + b'\n')
        except OSError:
            _exit(status)  # the controller reads its exit, as a forked job's
        if wait_files and read_exactly(1) is None:
            _exit(0)  # the controller has read the job's files (or is gone)
        # After the answer (and its files), the job's objects go. Their finalizers (a generator's `finally`, a file's
        # flush) run here, as a forked job's never do: what they print goes to /dev/null, what they write to the work
        # dir is removed with it (the controller cleans it after the verdict), what else they do the watch and the
        # check see.
        os.dup2(null, 1)
        os.dup2(null, 2)
        watch.armed = True
        main.clear()
        gc.collect()
        watch.armed = False
        flush_std()
        os.dup2(stdio[1], 1)
        os.dup2(stdio[2], 2)
        base.put_back(watch.assigned)
        retire = ('taint', watch.taint) if watch.taint is not None else base.check(main, main_refs)
        if retire is None:
            main, _ = prepare(base, stdio, touched, bool(stdin))
            main_refs = sys.getrefcount(main)
            gc.freeze()
        _write(3, b'\nV' + _dumps({'nonce': nonce, 'retire': retire}).encode() + b'\n')
        if retire is not None:
            _exit(0)


def run_in_context(code, compiled, stdin, files, kind, watch):
    """A job in its own copy of the baseline's context: the context variables it sets go with it. decimal's context is
    one of them, made fresh as a forked job's first getcontext() makes it."""
    decimal = sys.modules.get('decimal')
    if decimal is not None:
        decimal.setcontext(decimal.Context())
    return run_kind(code, compiled, stdin, files, kind, watch)


def prepare(base, stdio, touched, stdin=True):
    """Makes the process ready for its next job as a fork would find it: a fresh __main__, a fresh sys.stdin when the
    job had one (without, it read nothing: fd 0 has nothing to give), fd 0 back, the caches put back, the generators
    reseeded; then the tags of what that changed are taken again. `touched`: the indexes of the dicts this changes, None
    the first time (found then)."""
    before = list(base.tags) if touched is None else None
    os.dup2(stdio[0], 0)
    main = fresh_main()
    if stdin:
        fresh_stdin()
    base.put_back()
    reseed_at_fork()
    if touched is None:
        touched = [i for i, r in enumerate(base.readers) if r.value != before[i]]
    base.retake(touched)
    return main, touched


# ---------------- sandfleet_sandbox/reuse_handle.py
# The controller's handle on a reuse process, and what the controller trusts of it.
#
# A reuse process runs its jobs' code in its own address space, so nothing it says about itself is proof: a job can find
# its nonce, write frames on its report pipe, switch its check off. The handle takes each frame as a claim, and holds it
# to what the controller reads from outside the process (/proc, the pipes, signals), where no job can reach:
# - the report pipe carries one sequence: `R` once; then for each job `D` and `V`, each with that job's nonce (`T` and
#   `E` after a taint). Any other line, a stale or repeated nonce, a frame while no job is in flight or after its
#   verdict, is a violation;
# - at `D` the process has one thread and no child (a job that left either ends as a forked one, and writes no `D`);
#   its stdout and stderr say nothing more until its next job; after a `T` it writes no `D` or `V` (it ends as a forked
#   job ends, by its exit);
# - after `V` it runs nothing until its next job: before every job of the sandbox the controller finds it blocked (or
#   stopped), its CPU time where it was when first found so; while a job of another tenant runs, it is stopped
#   (SIGSTOP). It is given its next job only if it still runs nothing, its pipes are empty, and it has one thread and
#   no child.
# A violation kills the process, and the job in flight on it is answered `infra_error`. A job that takes the process
# over on purpose can still answer the later jobs of that process: the controller gives a reuse process the jobs of one
# tenant only (`tenant`), so those are its own tenant's.

import fcntl
import json
import os
import select
import sys
import time
import _signal


# How long a reuse process may take to block (or stop) after its verdict: it is a few instructions from its read.
FREEZE_WAIT_S = 0.5
STOPPED = (b'T', b't')
IDLE = (b'S',) + STOPPED  # blocked in its read of the next job, or stopped
SPIN = 50  # looks between yields before each further look waits a millisecond
FIONREAD = 0x541B  # the bytes waiting in a pipe (Linux's ioctl number, on either end)


class ReuseHandle:
    """The controller's handle on a reuse process: its pipes (job, stdout, stderr, report; the controller's ends), its
    state (`warming` until its baseline is taken, then `idle` (stopped), `busy` while it runs a job, `checking` until
    its verdict, `gone`), what its report pipe said, and `violation`: the first thing it did that the protocol does not
    allow (None while it did none)."""

    def __init__(self, pid, fds):
        self.pid = pid
        self.job_w, self.out_r, self.err_r, self.rep_r = fds
        os.set_blocking(self.job_w, False)  # a process that does not read its job never holds the controller (send)
        self.state = 'warming'
        self.buf = b''  # what the report pipe said after its last newline
        self.nonce = None  # the nonce of the job in flight (None: none is)
        self.done = None  # the job's end (`D`), once reported
        self.error = None  # a tainted job's error report (`E`)
        self.tainted = None  # what tainted the job (`T`), or None
        self.retire = None  # the verdict's reason to retire (`V`), or None
        self.violation = None
        self.tenant = None  # the tenant whose jobs it runs, bound by its first job
        # why it leaves service after its verdict however the verdict goes (its job ran out of memory)
        self.drop_after = None
        self.statm = os.open('/proc/%d/statm' % pid, os.O_RDONLY)
        self.stat = os.open('/proc/%d/stat' % pid, os.O_RDONLY)
        self.sched = os.open('/proc/%d/schedstat' % pid, os.O_RDONLY)
        self.children = os.open('/proc/%d/task/%d/children' % (pid, pid), os.O_RDONLY)
        self.pidfd = os.pidfd_open(pid)  # signals reach this process, never one that took its pid after it was reaped
        self.cpu_at = self.cpu_seen = 0  # its CPU time as its job was handed to it, and as last read (ns)
        self.idle_cpu = None  # its CPU time once found blocked (or stopped) after its verdict; None while it may run
        self.stopped = False  # stopped by the controller (isolate): a job of another tenant runs
        self.jobs, self.since = 0, 0.0
        self.outputs = select.poll()  # its stdout, stderr and report pipes, at once
        for fd in (self.out_r, self.err_r, self.rep_r):
            self.outputs.register(fd, select.POLLIN)
        self.exit = select.poll()  # its pidfd: readable once it exited
        self.exit.register(self.pidfd, select.POLLIN)

    def begin(self, nonce, tenant):
        self.state, self.nonce, self.done, self.error, self.tenant = 'busy', nonce, None, None, tenant

    def read(self):
        """Reads the report pipe; False at its end (the process is gone)."""
        try:
            data = os.read(self.rep_r, 65536)
        except BlockingIOError:
            return True
        if not data:
            return False
        buf = self.buf + data
        if len(buf) > 1 << 20:  # no frame is this long
            self.violate('a report line of over 1 MiB')
            buf = b''
        *lines, self.buf = buf.split(b'\n')
        for line in lines:
            self.on_line(line)
        return True

    def send(self, data, patience_s, limit_s=None):
        """Writes `data` on its job pipe, waiting for it to read while the pipe is full. False when it read nothing for
        `patience_s` (its loop reads its job at once: a job larger than the pipe goes a pipe-full at a time, each read
        as soon as it is there), or did not read it all within `limit_s` (None: `patience_s`)."""
        view, p, now = memoryview(data), None, time.perf_counter()
        until, end = now + patience_s, now + (patience_s if limit_s is None else limit_s)
        while view:
            try:
                view = view[os.write(self.job_w, view) :]
                until = min(time.perf_counter() + patience_s, end)  # it read: patience again
            except BlockingIOError:
                left = until - time.perf_counter()
                if left <= 0:
                    return False
                if p is None:
                    p = select.poll()
                    p.register(self.job_w, select.POLLOUT)
                p.poll(max(1, int(left * 1000)))
        return True

    def unread(self):
        """Bytes of its job still in its job pipe (a reuse process reads its job as soon as it is let run)."""
        try:
            return int.from_bytes(fcntl.ioctl(self.job_w, FIONREAD, b'\0\0\0\0'), sys.byteorder)
        except OSError:
            return 0

    def violate(self, what):
        if self.violation is None:
            self.violation = what

    def on_line(self, line):
        """One line of the report pipe, held to the protocol's order (each frame is written after a newline: empty
        lines are the separators)."""
        if not line:
            return
        kind, rest = line[:1], line[1:]
        if kind == b'T':
            if self.state != 'busy':
                return self.violate('a taint while no job ran')
            if self.tainted is None:
                self.tainted = rest.decode('utf-8', 'replace')[:64]
            return
        if self.tainted is not None:
            # After a taint the job ends as a forked one, by its exit, with at most an error report `E` (read as a
            # forked job's report is): an end or a verdict is the job's own writing (it wrote the taint itself, or
            # these).
            if kind == b'E':
                try:
                    self.error = json.loads(rest)
                except ValueError:
                    pass
            elif kind in (b'D', b'V'):
                self.violate('an end or a verdict after a taint')
            return
        if kind == b'R':
            if self.state != 'warming':
                return self.violate('a second ready line')
            self.state = 'idle'
            return
        if kind not in (b'D', b'V'):
            return self.violate('a report line of unknown kind %r' % kind)
        try:
            frame = json.loads(rest)
        except ValueError:
            return self.violate('a report line that is not JSON')
        if not isinstance(frame, dict) or frame.get('nonce') != self.nonce or self.nonce is None:
            return self.violate('a %s line with another nonce than its job\'s' % kind.decode())
        if kind == b'D':
            if self.state != 'busy':
                return self.violate('a second end of its job')
            self.done, self.state = frame, 'checking'  # its verdict may come in the same read
        else:
            if self.state != 'checking':
                return self.violate('a verdict before its job\'s end, or a second one')
            self.retire, self.nonce = frame.get('retire'), None  # a nonce answers once
            self.state = 'idle' if self.retire is None else 'gone'
            self.idle_cpu = None  # taken once it is found blocked (settled)

    # ── what the controller reads from outside ──

    def cpu_ns(self):
        """CPU time the process used so far, in nanoseconds (the kernel's count for its one thread); its last reading
        once it is gone."""
        try:
            self.cpu_seen = int(os.pread(self.sched, 64, 0).split()[0])
        except (OSError, ValueError, IndexError):
            pass
        return self.cpu_seen

    def resting_cpu(self):
        """Its CPU time once the kernel has counted the run that ended in its block or stop: the state letter changes a
        little before the switch away is counted, and while it is still on a CPU the reading grows, so it is read until
        two readings a yield apart agree."""
        last = self.cpu_ns()
        for _ in range(SPIN):
            os.sched_yield()
            now = self.cpu_ns()
            if now == last:
                return now
            last = now
        return last

    def run_state(self):
        """Its state letter (R, S, D, T, t, Z, …), or None once it is gone."""
        try:
            return os.pread(self.stat, 1024, 0).rsplit(b')', 1)[1].split()[0]
        except (OSError, IndexError):
            return None

    def alone(self):
        """Whether it has one thread and no child."""
        return self.company() is None

    def company(self):
        """What it has besides its one thread (`n threads`, `children PIDS`), or None; None too once it is gone (it
        answers nothing more: its check failed and it exited, say)."""
        try:
            n, kids = threads(self.stat), os.pread(self.children, 256, 0).split()
        except ProcessLookupError:
            return None
        except (OSError, IndexError, ValueError) as e:
            return 'unreadable (%s)' % e
        if n != 1:
            return '%d threads' % n
        return 'children %s' % b' '.join(kids).decode() if kids else None

    def silent(self):
        """Whether nothing waits on its stdout, stderr and report pipes (one poll; what waits is read and dropped)."""
        if not self.outputs.poll(0):
            return self.violation is None and not self.buf
        for fd in (self.out_r, self.err_r):
            try:
                os.read(fd, 65536)
            except OSError:
                pass
        self.read()
        return False

    def settled(self, full=True):
        """Whether it runs nothing between its jobs: blocked reading its next job (or stopped), its CPU time unmoved
        since
        it was first found so after its verdict; `full`: and alone and silent. The first time, waits for it to block
        (at most FREEZE_WAIT_S: it is a few instructions from the read, as a rule) and takes its CPU time."""
        if self.idle_cpu is None:
            waited = 0
            while self.run_state() not in IDLE:
                if waited >= FREEZE_WAIT_S * 1000 + SPIN:
                    return False
                if waited < SPIN:
                    os.sched_yield()  # a few instructions from its read, as a rule
                else:
                    select.select((), (), (), 0.001)
                waited += 1
            self.idle_cpu = self.resting_cpu()
        if self.cpu_ns() != self.idle_cpu:
            return False  # found blocked since: it ran no instruction, or it moved
        return not full or self.quiet()

    def quiet(self):
        """Alone (one thread, no child) and silent (nothing waits on its pipes)."""
        return self.alone() and self.silent()

    def isolate(self):
        """Stops it while a job of another tenant runs in the sandbox: nothing it could do then runs beside that job.
        Its CPU time is taken again once it is stopped (the stop itself is its CPU). False when it does not stop."""
        if self.stopped:
            return True
        try:
            _signal.pidfd_send_signal(self.pidfd, _signal.SIGSTOP)
        except OSError:
            return False
        self.stopped, waited = True, 0
        while self.run_state() not in STOPPED:
            if waited >= FREEZE_WAIT_S * 1000 + SPIN:
                return False
            if waited < SPIN:
                os.sched_yield()  # a context switch away, as a rule
            else:
                select.select((), (), (), 0.001)
            waited += 1
        self.idle_cpu = self.resting_cpu()
        return True

    def thaw(self):
        """Lets it run its next job (continued, when it was stopped)."""
        self.idle_cpu = None
        if self.stopped:
            self.stopped = False
            _signal.pidfd_send_signal(self.pidfd, _signal.SIGCONT)

    def pages(self):
        return int(os.pread(self.statm, 256, 0).split()[0])

    def gone(self):
        """Whether the process has exited (its pidfd is readable), reaped by its zygote or not yet."""
        return bool(self.exit.poll(0))

    def kill(self):
        try:
            _signal.pidfd_send_signal(self.pidfd, _signal.SIGKILL)
        except OSError:
            pass

    def close(self):
        for fd in (
            self.job_w,
            self.out_r,
            self.err_r,
            self.rep_r,
            self.statm,
            self.stat,
            self.sched,
            self.children,
            self.pidfd,
        ):
            try:
                os.close(fd)
            except OSError:
                pass
        self.state = 'gone'


# ---------------- sandfleet_sandbox/zygote_process.py
# A zygote process: warm with one tier's modules, it forks a job process (or a reuse process) ahead of each job, reaps
# each and reports its end. Its code runs in the zygote; the controller's handle on it is zygote_handle.py.
#
# The controller sends the next job process's pipes with each request; they arrive as fds 1-4 (the
# lowest free ones: the zygote keeps 1-4 closed), where the job process needs them.

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


# ---------------- sandfleet_sandbox/zygote_handle.py
# The controller's handle on a zygote (zygote_process.py): its socket, its spare job process, its reuse process, the
# exits it reported.

import json
import os
import socket



class Zygote:
    """The controller's handle on one zygote: its socket, its spare job process, its reuse process (`reuser`), the exit
    statuses it reported (`exits`) and the CPU time of each exited process (`cpu_us`)."""

    def __init__(self, name, others):
        self.name = name
        self.warm = False  # it reported its tier warm
        self.ready = False  # it has a spare
        self.dead = False
        self.modules = []  # what it preloaded
        self.ms = 0  # how long it took to warm
        self.spare = None  # (pid, the controller's ends of its pipes) of the job process it forked ahead
        self.exits = {}  # pid → wait status of each child it reaped
        self.cpu_us = {}  # pid → CPU time of each child it reaped
        self.asked = None  # the pipes sent with a request for a spare, until it comes
        self.reuser = None  # its reuse process (a reuse_handle.ReuseHandle), once it has one
        self.reuse_asked = None  # the pipes sent with a request for a reuse process, until it comes
        self.forget = set()  # reuse processes dropped before their exit came
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        controller = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                for s in [self.sock] + [z.sock for z in others]:
                    s.detach()
                os.dup2(theirs.detach(), ZYGOTE_SOCKET)
                os.closerange(3, ZYGOTE_SOCKET)
                os.closerange(ZYGOTE_SOCKET + 1, 1 << 20)  # the channel, the other zygotes' sockets
                zygote(socket.socket(fileno=ZYGOTE_SOCKET), name, controller)
            finally:
                os._exit(0)
        theirs.close()
        self.statm = os.open('/proc/%d/statm' % self.pid, os.O_RDONLY)  # read with pread at each job (Placement.limit)

    def ask(self):
        """Asks the zygote for its next job process, forked ahead of its job."""
        if self.asked is not None or self.spare is not None or self.dead or not self.warm:
            return
        self.asked = self.request(b't')

    def ask_reuse(self):
        """Asks the zygote for a reuse process (it takes its baseline at once, then waits for a job)."""
        if self.reuse_asked is not None or self.reuser is not None or self.dead or not self.warm:
            return
        self.reuse_asked = self.request(b'u')

    def request(self, kind):
        """Sends request `kind` with a new process's pipes (their other ends stay here, returned): job (read by it),
        stdout, stderr and report (written by it). None when the zygote is gone."""
        job, out, err, rep = os.pipe(), os.pipe(), os.pipe(), os.pipe()
        try:
            socket.send_fds(self.sock, [kind], [out[1], err[1], rep[1], job[0]])
        except OSError:
            for fd in (job[1], out[0], err[0], rep[0]):
                os.close(fd)
            return None
        finally:
            for fd in (out[1], err[1], rep[1], job[0]):
                os.close(fd)
        for fd in (out[0], err[0], rep[0]):
            os.set_blocking(fd, False)
        return job[1], out[0], err[0], rep[0]

    def on_message(self):
        """Reads one message; answers its (first) kind (b'r', b'c', b'x', b'e'), or None when the zygote is gone."""
        try:
            msg = self.sock.recv(4096)
        except OSError:
            msg = b''
        if not msg:
            self.dead = True
            return None
        first = None
        # a job's end and the spare forked meanwhile come together: b'x PID STATUS\nc PID'
        for part in msg.split(b'\n'):
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
        elif kind == b'u':
            self.reuser, self.reuse_asked = ReuseHandle(int(rest), self.reuse_asked), None
        elif kind == b'x':
            pid, status, cpu_us = rest.split()
            self.exits[int(pid)] = int(status)
            self.cpu_us[int(pid)] = int(cpu_us)
        elif kind == b'e':  # the fork failed (the sandbox's process limit): asked again after the job (Leftovers)
            fds = self.reuse_asked if rest == b'u' else self.asked
            for fd in fds or ():
                os.close(fd)
            if rest == b'u':
                self.reuse_asked = None
            else:
                self.asked = None
        return kind


# ---------------- sandfleet_sandbox/cleanup.py
# After each job: the processes it left behind killed, its work dir removed, the scratch dirs and System V IPC
# objects back to what the sandbox started with, the zygotes and the controller read from outside; the next job must see
# none of it (`Leftovers`).

import ctypes
import os
import signal
import stat


# System V IPC objects outlive the job that made them (they belong to the sandbox's IPC namespace): file, remover.
SYSV_IPC = (
    ('/proc/sysvipc/shm', lambda i: LIBC.shmctl(i, 0, None)),
    ('/proc/sysvipc/msg', lambda i: LIBC.msgctl(i, 0, None)),
    ('/proc/sysvipc/sem', lambda i: LIBC.semctl(i, 0, 0)),
)  # IPC_RMID is 0


def remove_tree(path):
    """Removes the file, link or directory tree at `path`, also where a job took its own permissions away or nested
    directories far deeper than PATH_MAX or the recursion limit (iterative, walking with relative chdir; no job
    process is left to race it). False when something stays."""
    home = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
    ok = True
    try:
        os.chdir(os.path.dirname(path) or '/')
        names = [
            [os.path.basename(path)]
        ]  # names[i]: what is still to remove at depth i (the last one is being removed)
        while names:
            if not names[-1]:  # everything below was removed (or could not be): go up, remove this directory
                names.pop()
                if not names:
                    break
                os.chdir('..')
                try:
                    os.rmdir(names[-1].pop())
                except OSError:
                    ok = False
                continue
            n = names[-1][-1]
            try:
                st = os.lstat(n)
            except OSError:
                names[-1].pop()
                continue
            if not stat.S_ISDIR(st.st_mode):
                try:
                    os.unlink(n)
                except OSError:
                    ok = False
                names[-1].pop()
                continue
            try:
                os.chmod(n, 0o700)
                os.chdir(n)
                names.append(os.listdir('.'))
            except OSError:
                ok = False
                names[-1].pop()
    except OSError:
        ok = False
    finally:
        os.fchdir(home)
        os.close(home)
    return ok


IPC_INFO_BUF = ctypes.create_string_buffer(256)


def sysv_in_use():
    """How many shm segments, message queues and semaphore sets exist (SHM_INFO, MSG_INFO, SEM_INFO: three syscalls,
    cheaper than reading /proc/sysvipc after each job); None without libc."""
    if LIBC is None:
        return None
    b = IPC_INFO_BUF
    try:
        LIBC.shmctl(0, 14, b)
        shm = ctypes.c_int.from_buffer(b, 0).value  # struct shm_info: used_ids
        LIBC.msgctl(0, 12, b)
        msg = ctypes.c_int.from_buffer(b, 0).value  # struct msginfo: msgpool
        LIBC.semctl(0, 0, 19, b)
        sem = ctypes.c_int.from_buffer(b, 28).value  # struct seminfo: semusz
    except (AttributeError, OSError):
        return None
    return shm, msg, sem


def sysv_ids(path):
    """The ids listed in one /proc/sysvipc file (empty when it is not readable)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            text = os.read(fd, 1 << 20)
        finally:
            os.close(fd)
    except OSError:
        return set()
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
        self.modes = {
            d: stat.S_IMODE(os.stat(d).st_mode) for d in {*self.scratch, os.path.dirname(workdir)} if os.path.isdir(d)
        }
        self.ipc = {path: sysv_ids(path) for path, _ in SYSV_IPC} if LIBC is not None else {}
        self.ipc_in_use = sysv_in_use()

    def clean(self, ipc=True):
        """Removes the job's working directory, whatever it left in the scratch dirs and (`ipc`: a job that could make
        them) its System V IPC objects. False when something could not be removed (the sandbox is then retired: the next
        job must not see it)."""
        ok = True
        for d, mode in self.modes.items():
            try:
                os.chmod(d, mode)
            except OSError:
                pass
        try:
            os.rmdir(self.workdir)
        except FileNotFoundError:
            pass
        except OSError:
            ok = remove_tree(self.workdir)
        for d, base in self.scratch.items():
            try:
                names = os.listdir(d)
            except OSError:
                ok = False
                continue
            for n in names:
                if n not in base:
                    ok = remove_tree(os.path.join(d, n)) and ok
        if ipc and (self.ipc_in_use is None or sysv_in_use() != self.ipc_in_use):
            for path, remove in SYSV_IPC:
                if path in self.ipc:
                    for i in sysv_ids(path) - self.ipc[path]:
                        remove(i)
        try:
            os.mkdir(self.workdir, 0o700)  # the next job's, fresh
        except OSError:
            ok = False
        return ok


def sweep(children, keep):
    """Kills every process a job left behind (reparented to the controller, the subreaper; `children`: its
    /proc/self/task/PID/children, open), all but the pids in `keep`. (True, or False if some survive; the CPU time
    the processes it reaped used, in microseconds.)"""
    cpu_us = 0
    for _ in range(50):
        try:
            pids = [p for p in map(int, os.pread(children, 1 << 16, 0).split()) if p not in keep]
        except OSError:
            pids = []
        if not pids:
            return True, cpu_us
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        for p in pids:
            try:
                usage = os.wait4(p, 0)[2]
            except OSError:
                continue
            cpu_us += int((usage.ru_utime + usage.ru_stime) * 1e6)
    return False, cpu_us


class Leftovers:
    """What the jobs leave in the sandbox, found and undone after each: the processes reparented to the controller
    swept (all but `keep`, the zygotes), the zygotes resumed and read from outside, the controller's own limits read,
    the dirs cleaned (`dirs`, a Cleanup). `broken`: why no more job may run here (something could not be undone: the
    runner replaces the sandbox), or None."""

    def __init__(self, dirs, keep):
        self.dirs, self.keep = dirs, keep
        self.broken = None
        # /proc/self/task/PID/children, kept open and read again with pread (cheaper than open, read and close)
        self.children = os.open('/proc/self/task/%d/children' % os.getpid(), os.O_RDONLY)

    def after_job(self, alive, clean):
        """After a job: its processes swept; each zygote of `alive` (those live as it began) asked for its next spare
        (its fork may have failed during the job: the sandbox's process limit) and, when the job did not end `clean`ly
        in a reuse process, resumed (SIGCONT: a stopped one goes on) and read from outside; the controller's own limits
        read. (Why the sandbox retires, or None; the CPU time of the processes swept, in microseconds.)"""
        swept, orphans_us = sweep(self.children, self.keep)
        reason = None if swept else 'unswept'  # a process of the job survived SIGKILL
        for z in alive:
            if not z.dead:
                if not clean:
                    try:
                        os.kill(z.pid, signal.SIGCONT)
                    except OSError:
                        pass
                z.ask()
            if not clean and reason is None and (z.dead or zygote_tampered(z)):
                reason = 'zygote'
        if controller_tampered():
            reason = 'tampered'  # the job reniced or prlimited the controller
        return reason, orphans_us

    def sweep_all(self):
        """At the controller's end: every process but the zygotes killed."""
        sweep(self.children, self.keep)


# ---------------- sandfleet_sandbox/capture.py
# A job's output as the controller reads it while the job runs: its stdout and stderr pipes and, for a forked job, its
# report pipe, each kept up to the job's cap (what comes past it is read and dropped, and marked truncated): a job never
# blocks on a full pipe once its pipes are watched, and nothing is buffered unbounded.

import os
import select


class Capture:
    """The pipes of one job (the controller's ends, non-blocking), read into bytearrays. Registered on the controller's
    poller only once `watch`ed (most jobs end before: their output waits in the pipes, read at `finish`)."""

    def __init__(self, out_r, err_r, rep_r, cap, poller):
        self.out_r, self.err_r, self.rep_r = out_r, err_r, rep_r
        self.cap, self.poller, self.watching = cap, poller, False
        self.bufs = {out_r: bytearray(), err_r: bytearray()}
        if rep_r is not None:
            self.bufs[rep_r] = bytearray()  # a reuse process's report pipe is read by its ReuseHandle
        self.truncated = dict.fromkeys(self.bufs, False)
        self.open = set(self.bufs)

    def watch(self):
        """From now on the controller's poll wakes for what the job writes."""
        self.watching = True
        for fd in self.open:
            self.poller.register(fd, select.POLLIN)

    def drain(self, fd):
        """Reads what is there: False at EOF, None when nothing is, else True."""
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return None
        if not data:
            self.open.discard(fd)
            if self.watching:
                self.poller.unregister(fd)
            return False
        room = self.cap - len(self.bufs[fd])
        if len(data) > room:
            self.truncated[fd] = True
            data = data[: max(room, 0)]
        self.bufs[fd] += data
        return True

    def finish(self):
        """Reads each pipe to its end, once every writer is dead, dying or done (EOF, or nothing more will come), and
        leaves the poller."""
        for fd in list(self.open):
            while self.drain(fd):
                pass
            if fd in self.open and self.watching:
                self.poller.unregister(fd)

    def unwatch(self):
        """Leaves the poller without reading (the pipes are closed by their owner)."""
        if self.watching:
            for fd in self.open:
                self.poller.unregister(fd)
        self.watching = False

    def close(self):
        for fd in self.bufs:
            os.close(fd)

    def text(self, fd):
        return self.bufs[fd].decode('utf-8', 'replace')


# ---------------- sandfleet_sandbox/results.py
# The result frames the controller answers jobs with: one of a job that did not run (`failed`; `refused`, a frame
# refused at its parse), and the status, exit code and error of one that did, from what the controller saw of its end
# (`ending`).

import os
import signal


def failed(job_id, status, type_, message, retire_reason=None):
    """The result of job `job_id` that did not run; `retire_reason`: why the sandbox must be replaced, None when it
    need not."""
    result = {
        'op': 'result',
        'id': job_id,
        'status': status,
        'exit_code': None,
        'stdout': '',
        'stderr': '',
        'duration_ms': 0,
        'truncated': {'stdout': False, 'stderr': False},
        'error': {'type': type_, 'message': message},
        'files': {},
        'retire': retire_reason is not None,
        'tier': None,
    }
    if retire_reason is not None:
        result['retire_reason'] = retire_reason
    return result


def refused(error):
    """The answer to a frame refused at its parse (a frames.FrameError that names its job: the runner's fault; nothing
    ran)."""
    return failed(error.frame_id, 'infra_error', 'BadFrame', 'the executor refused the job\'s frame: %s' % error)


def ending(timeout_ms, tier, timed_out, wstatus, done, report, oom_killed):
    """(status, exit_code, error, out_of_memory) of a job of `timeout_ms` that ran: `timed_out` by the controller;
    `wstatus` its process's wait status as its zygote reported it, or `done` the end a reuse process reported (None
    both: its zygote is gone); `report` its error report (anything a job wrote to fd 3 may be there); `oom_killed()`
    whether the sandbox's memory cgroup killed a process since it was last asked. `out_of_memory`: its heap ran out (a
    reuse process is then dropped).
    """
    if timed_out:
        return (
            'timeout',
            None,
            {'type': 'Timeout', 'message': 'the run exceeded timeout_ms=%s' % timeout_ms},
            False,
        )
    if wstatus is None and done is None:
        return 'killed', None, {'type': 'ZygoteExited', 'message': 'the %s zygote is gone' % tier}, False
    if done is not None or os.WIFEXITED(wstatus):
        exit_code = int(done['status']) if done is not None else os.WEXITSTATUS(wstatus)
        status, error, memory = 'ok' if exit_code == 0 else 'error', None, False
        if exit_code and report:
            error = {
                'type': str(report.get('type', 'ExitCode'))[:256],
                'message': str(report.get('message', 'exited with code %d' % exit_code))[:8192],
            }
            if 'traceback' in report:
                error['traceback'] = str(report['traceback'])[-8192:]
            if report.get('memory') is True:
                status, memory = 'memory', True
        elif exit_code:
            error = {'type': 'ExitCode', 'message': 'exited with code %d' % exit_code}
        return status, exit_code, error, memory
    sig = os.WTERMSIG(wstatus)
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
    if sig == signal.SIGKILL and oom_killed():  # the kernel killed the job (its oom_score_adj is 1000)
        return (
            'memory',
            None,
            {'type': 'MemoryError', 'message': 'the sandbox ran out of memory: the kernel killed the job (cgroup OOM)'},
            False,
        )
    return (
        'timeout' if sig == signal.SIGXCPU else 'killed',
        None,
        {'type': name, 'message': 'killed by signal %d (%s)' % (sig, name)},
        False,
    )


# ---------------- sandfleet_sandbox/runner_channel.py
# The controller's end of the runner's channel: NDJSON frames in and out, each frame in parsed once, by its op's
# parser (PARSERS: frames.py, judge_frames.py), and queued in order for the controller to answer; the runner's word on
# the judge that runs (its acks, its stop) kept apart for that judge to take.
#
# The channel is a private dup of the executor's fds 0 and 1 (or the runner's Unix socket): fds 0, 1 and 2 point at
# /dev/null once it is open, and no other process holds it, so nothing a job writes can reach it.

import collections
import fcntl
import json
import os
import socket
import stat


# The most the controller reads of the runner's channel at once (a frame of megabytes comes in few reads), and the
# buffer it asks the kernel for on the channel and on a job pipe whose job is larger than a pipe holds by default (each
# pipe-full is a turn between the writer and the reader: fewer turns under load).
CHANNEL_READ = 1 << 20
BIG_BUFFER = 1 << 20
PIPE_BYTES = 65536  # a pipe's default capacity (Linux)
F_SETPIPE_SZ = 1031


class Shutdown(collections.namedtuple('Shutdown', ())):
    """A `shutdown` frame: kill every job, exit."""

    __slots__ = ()


def shutdown(frame):
    return SHUTDOWN


SHUTDOWN = Shutdown()
# Each op the runner sends: its frame's parser.
PARSERS = {
    'exec': exec_job,
    'judge': judge_job,
    'judge_ack': judge_ack,
    'judge_stop': judge_stop,
    'shutdown': shutdown,
}
# The runner's word on the judge that runs: its frames' types, and their ops (a refused one is that judge's to answer).
WORDS = (JudgeAck, JudgeStop)
WORD_OPS = ('judge_ack', 'judge_stop')


def parse_frame(frame):
    """A decoded frame (what json.loads made of a line) as its frozen type; FrameError when it is not one of PARSERS'
    ops, or not as its op's parser wants it."""
    if type(frame) is not dict:
        raise FrameError('a frame that is not a JSON object')
    op = frame.get('op')
    parser = PARSERS.get(op) if type(op) is str else None
    if parser is None:
        raise FrameError('a frame of no known op (%.40r)' % (op,), frame_id(frame))
    try:
        return parser(frame)
    except FrameError as e:
        raise FrameError(str(e), e.frame_id, op) from None


def grow_pipe(fd, size):
    """Asks for a pipe buffer of `size` bytes on pipe `fd` (either end); where it is refused (past
    /proc/sys/fs/pipe-max-size, or the user's pipe pages), the pipe keeps its own."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, size)
    except OSError:
        pass


def open_channel():
    """The runner's channel: (fd read from, fd written to). stdin/stdout; or, when SANDFLEET_CHANNEL names the runner's
    listening Unix socket (the docker driver binds it into the container), that socket, connected once, here, before
    any job runs."""
    path = os.environ.get(SANDBOX_ENV['channel'])
    if not path:
        fds = os.dup(0), os.dup(1)
        if stat.S_ISFIFO(os.fstat(fds[0]).st_mode):
            grow_pipe(fds[0], BIG_BUFFER)
        return fds
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BIG_BUFFER)  # the kernel caps it (net.core.rmem_max)
    except OSError:
        pass
    sock.connect(path)
    fd = sock.detach()
    return fd, fd


class RunnerChannel:
    """The runner's channel as the controller holds it: `fd_in` (polled by the controller), `send`; `jobs`, the typed
    frames still to answer, in the order they came (a FrameError among them: a frame refused at its parse, answered in
    its turn); `words`, the runner's word on the judge that runs (WORDS, and those of their ops refused at their
    parse), in the order they came, for that judge to take (judge_run.py); `closing` once a `shutdown` came or the
    runner closed its end."""

    def __init__(self):
        self.fd_in, self.fd_out = open_channel()
        null = os.open('/dev/null', os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        os.set_inheritable(self.fd_in, False)
        os.set_inheritable(self.fd_out, False)
        self.jobs = []
        self.words = []
        self.closing = False
        self.pieces = []  # the pieces of a frame not ended yet
        self.inbuf = None  # what the channel is read into (allocate: after the zygotes' fork, none of them holds it)

    def allocate(self):
        self.inbuf = memoryview(bytearray(CHANNEL_READ))

    def send(self, frame):
        os.write(self.fd_out, json.dumps(frame).encode() + b'\n')

    def log(self, level, message):
        self.send({'op': 'log', 'level': level, 'message': message})

    def read(self):
        """One read of the channel, its frames taken; False at its end (the runner closed it: `closing`). A frame of
        megabytes (stdin, files) comes in many reads: its pieces are joined once, at its newline (joining and scanning
        the whole buffer at each read would be quadratic in the frame's size, and each copy of megabytes costs the
        job)."""
        n = os.readv(self.fd_in, [self.inbuf])
        if not n:
            self.closing = True
            return False
        data = bytes(self.inbuf[:n])
        start = 0
        nl = data.find(b'\n')
        while nl != -1:
            if self.pieces:
                self.pieces.append(data[start:nl])
                line = b''.join(self.pieces)
                self.pieces = []
            else:
                line = data[start:nl]
            self.take(line)
            start = nl + 1
            nl = data.find(b'\n', nl + 1)
        if start < n:
            self.pieces.append(data[start:] if start else data)
        return True

    def take(self, line):
        """One frame, parsed once into its frozen type: a job queued, a word on the judge that runs kept for it,
        `shutdown` heeded; a frame refused at its parse queued to be answered (a result naming its id; a refused word:
        its judge's to answer), or logged when it names no job."""
        if not line.strip():
            return
        try:
            job = parse_frame(json.loads(line))
        except ValueError as e:  # not JSON (json's own error is a ValueError), or a FrameError
            error = e if isinstance(e, FrameError) else FrameError('a frame that is not JSON')
            if error.frame_id is None:
                self.log('error', 'frame refused: %s' % error)
                return
            job = error
        if isinstance(job, Shutdown):
            self.closing = True
        elif isinstance(job, WORDS) or (isinstance(job, FrameError) and job.op in WORD_OPS):
            self.words.append(job)
        else:
            self.jobs.append(job)


# ---------------- sandfleet_sandbox/job_run.py
# One run of a job, from the moment its process has it to its result frame: its output read while it runs and its
# deadline kept (`Run.watch`: the soft stop, then the kill), what it left swept and its files read back (`Run.after`),
# its result (`Run.result`). The process is chosen and the job handed to it before (placement.py).

import json
import os
import signal
import time


# How long a job runs before the controller also watches its pipes (a full pipe blocks the job until then).
PATIENCE_S = float(os.environ.get(SANDBOX_KNOBS['pipe_patience_ms'], '20')) / 1000
# The sandbox's memory cgroup, as a container sees it (v2, then v1): its count of OOM kills.
OOM_FILES = ('/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control')


def oom_kills():
    """OOM kills in this sandbox's memory cgroup so far, or None where no cgroup file is visible."""
    for path in OOM_FILES:
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(' ')
                    if key == 'oom_kill':
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


class OomCount:
    """The sandbox's memory cgroup's OOM kills, as last seen."""

    def __init__(self):
        self.seen = oom_kills()

    def killed(self):
        """Whether the cgroup killed a process since the last time this was asked (never where no cgroup file is
        visible)."""
        ooms = oom_kills() if self.seen is not None else None
        if ooms is None or ooms <= self.seen:
            return False
        self.seen = ooms
        return True


class Run:
    """A job in the process it runs in, from when its job was handed to it: `job` (its frames.ExecJob), tier `z`, its
    pid and pipes (job, stdout, stderr, report: the controller's ends), `reuser` (its handle when it is a reuse
    process; None: a spare, forked for it), `refused` (why a job that asked for reuse runs forked, or None),
    `waited_ms` (how long it waited for its tier to warm; None: it did not); then what the controller saw of it."""

    def __init__(self, job, z, pid, fds, reuser, refused, waited_ms):
        self.job, self.z, self.pid, self.fds, self.reuser = job, z, pid, fds, reuser
        self.refused, self.waited_ms = refused, waited_ms
        self.t0 = time.perf_counter()  # the job's time runs from here
        self.capture = None  # its output (watch)
        self.duration = 0.0  # its run time in ms
        self.timed_out = False  # whether the controller stopped it at its deadline
        # after: the end a reuse process reported, the wait status of a forked one (None both: its zygote is gone), its
        # CPU time in ns (None: unknown), why the sandbox retires (None: it goes on), its error report, the files it
        # asked for back and why some were not
        self.done = None
        self.wstatus = None
        self.cpu_ns = None
        self.retire = None
        self.report = None
        self.files = {}
        self.fetch_errors = {}

    def watch(self, pump, poller, channel):
        """Reads the job's output while it runs (`pump`: the controller's poll round; `poller` its poll), until its
        process ends (a forked job), its reuse process reports its end or breaks the protocol, or its deadline: then
        the soft stop (SIGTERM to its process group), SOFT_STOP_S later SIGKILL; at once when the runner's `channel`
        is closing. Sets `capture`, `duration` and `timed_out`."""
        z, pid, r = self.z, self.pid, self.reuser
        _, out_r, err_r, rep_r = self.fds
        if r is None:
            os.close(self.fds[0])
        capture = self.capture = Capture(out_r, err_r, rep_r if r is None else None, self.job.max_output_bytes, poller)
        deadline = self.t0 + self.job.timeout_ms / 1000
        # The pipes are watched only once the job has run PATIENCE_S: most jobs end sooner, their output waiting in the
        # pipes, and the controller wakes once, for the zygote's report of the exit (or the reuse process's end of the
        # job, on its report pipe, always watched), not also for each write.
        watch_from = self.t0 + PATIENCE_S
        timed_out = False
        killed = False
        while pid not in z.exits and not z.dead and (r is None or (r.done is None and r.violation is None)):
            now = time.perf_counter()
            left = deadline - now
            if (left <= 0 or channel.closing) and not killed:
                if r is not None and not timed_out and r.unread():
                    r.violate('it did not take its job')  # the job never started: another sandbox runs it
                    break
                if not channel.closing and not timed_out:
                    # the deadline: the soft stop first (the executor's handler flushes what Python holds of the job's
                    # output; a handler of the job's own runs instead)
                    timed_out = True
                    if r is not None:
                        r.cpu_seen = r.cpu_ns()
                    try:
                        os.killpg(pid, signal.SIGTERM)
                    except OSError:
                        pass
                    deadline = now + SOFT_STOP_S
                    continue
                killed = True
                if r is not None:
                    r.cpu_seen = r.cpu_ns()  # its CPU as it is killed (once reaped, it is read no more)
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                deadline = time.perf_counter() + 1  # the zygote reports the exit; past this, give up on it
            elif left <= 0:
                break
            if not capture.watching and now >= watch_from:
                capture.watch()
            wait = left if capture.watching else min(left, watch_from - now)
            for fd, _ in pump(int(max(wait, 0) * 1000) + 1):
                if fd in capture.open:
                    capture.drain(fd)
        self.duration = (time.perf_counter() - self.t0) * 1000
        self.timed_out = timed_out
        if r is not None and r.done is not None and r.violation is None and not r.alone():
            # a job that left a thread or child ends as a forked one: no D comes
            r.violate('not alone at its end: %s' % r.company())
        if r is not None and r.done is None and r.violation is None and r.unread():
            r.violate('it ended without taking its job')  # the job never started: another sandbox runs it

    def after(self, leftovers, keeper, alive):
        """After every job, a reuse process's clean end too (its word that it left nothing is no proof): what it left
        reparented to the controller is killed; after one that did not end cleanly in a reuse process the zygotes of
        `alive` get SIGCONT and their limits, scheduling and lives are read (`leftovers`: cleanup.Leftovers). Then its
        output read to its end, its process let go (reaped; or, a reuse process, dropped or kept for the next job:
        `keeper`, the ReuseKeeper), the files it asked for read back and the work dir cleaned (after a reuse process's
        verdict, when it goes on). Sets `done`, `wstatus`, `cpu_ns`, `retire`, `files`, `fetch_errors` and `report`."""
        z, pid, r, capture = self.z, self.pid, self.reuser, self.capture
        done = self.done = r.done if r is not None else None
        wstatus = self.wstatus = z.exits.get(pid) if done is None else None
        if r is not None:
            cpu_ns = (r.cpu_ns() if done is not None else r.cpu_seen) - r.cpu_at
        else:
            cpu_ns = z.cpu_us.pop(pid, 0) * 1000 if wstatus is not None else None
        reason, orphans_us = leftovers.after_job(alive, done is not None)
        if cpu_ns is not None:
            cpu_ns += orphans_us * 1000
        self.cpu_ns = cpu_ns
        keeper.last_clean = None
        capture.finish()
        if r is None:
            z.exits.pop(pid, None)
            capture.close()
        else:
            keeper.job_ended(z, r, self.timed_out)
        keeper.running = None
        wanted = self.job.fetch_files
        if wstatus is not None or done is not None:
            self.files, self.fetch_errors = fetch_files(WORKDIR, wanted, PLACES)
        else:
            self.fetch_errors = dict.fromkeys(wanted, 'not read: the zygote that ran the job is gone')
        if done is not None:
            # the reuse process goes on (it drops the job's objects, then checks): the dirs are cleaned after its
            # verdict
            if wanted:
                r.send(b'g', 0)
            keeper.answered = (z, r)
            cleaned = True
        else:
            cleaned = leftovers.dirs.clean()
        if r is not None:
            report = done['report'] if done is not None else r.error
        else:
            try:
                report = json.loads(capture.bufs[capture.rep_r]) if capture.bufs[capture.rep_r] else None
            except ValueError:
                report = None
        self.report = report if isinstance(report, dict) else None
        # The sandbox takes the next job unless something of this one could not be undone.
        if reason is None and not cleaned:
            reason = 'cleanup'
        if reason is None and (z.dead or (wstatus is None and done is None)):
            reason = 'zygote'
        self.retire = reason

    def result(self, oom_killed):
        """The result frame, once `after` filled the run in (`oom_killed()`: whether the sandbox's memory cgroup killed
        a process since it was last asked)."""
        z, r, capture = self.z, self.reuser, self.capture
        status, exit_code, error, out_of_memory = ending(
            self.job.timeout_ms, z.name, self.timed_out, self.wstatus, self.done, self.report, oom_killed
        )
        if out_of_memory and self.done is not None:
            r.drop_after = 'memory'  # its heap ran out: a fresh fork of its zygote takes over
        out, err = capture.out_r, capture.err_r
        result = {
            'op': 'result',
            'id': self.job.id,
            'status': status,
            'exit_code': exit_code,
            'stdout': capture.text(out),
            'stderr': capture.text(err),
            'duration_ms': self.duration,
            'truncated': {'stdout': capture.truncated[out], 'stderr': capture.truncated[err]},
            'error': error,
            'files': self.files,
            'retire': self.retire is not None,
            'tier': z.name,
            'isolation': 'reuse' if r is not None else 'fork',
        }
        if self.retire is not None:
            result['retire_reason'] = self.retire
        if self.cpu_ns is not None:
            result['cpu_ms'] = round(self.cpu_ns / 1e6, 3)
        if self.fetch_errors:
            result['fetch_errors'] = self.fetch_errors
        if self.refused is not None:
            result['reuse_refused'] = self.refused
        if self.waited_ms is not None:
            result['waited_ms'] = self.waited_ms
        return result


# ---------------- sandfleet_sandbox/placement.py
# Where a job runs: its tier (the cheapest that has what it imports; one still warming waited for, at most the job's
# `wait_ms`), then its tier's reuse process when the job may run there and the process takes it (reuse_keeper.py), else
# the tier's spare, checked and limited from outside before its job is written to it. The answer is a `Run` (job_run.py),
# or the result of a job that cannot run.

import marshal
import os
import resource
import select
import signal
import time


# How long a spare may take to read a job larger than its pipe holds (it reads at once, as fast as it is written; one
# that took this long is stuck, and the next spare takes the job).
HAND_OVER_WAIT_S = 30.0


def precompile(code):
    """The job's code compiled here, or None when it does not compile (the job then raises the error itself). Compiling
    in a fresh fork costs copy-on-write faults; here, where the compiler's pages are already private, a fraction of
    that; the code object travels to the job process marshalled."""
    try:
        return compile(code, MAIN_FILE, 'exec', dont_inherit=True)
    except BaseException:
        return None


def job_bytes(job, nonce, wait_files=False):
    """A job (an ExecJob, or a judge's JudgeStep) as its job process reads it from its pipe (job_process.read_job): the
    length of what follows, marshalled: the code, its code object (an ExecJob's compiled here: a fresh fork paid ~1 ms
    of copy-on-write faults in compile(); a JudgeStep's compiled once by its judge), the length of stdin, files, for a
    reuse process the job's nonce and whether it waits, after the job, until the controller has read the files it asked
    for back, and its kind (None: its code runs; a JudgeStep's (name, spec): job_process.KINDS); then stdin itself (not
    marshalled: megabytes would be copied twice more, here and in the job process)."""
    stdin = job.stdin.encode()
    if type(job) is JudgeStep:
        compiled = job.compiled
        kind = job.kind
    else:
        compiled = precompile(job.code)
        kind = None
    payload = marshal.dumps((job.code, compiled, len(stdin), dict(job.files), nonce, wait_files, kind))
    return len(payload).to_bytes(8, 'little') + payload + stdin


def job_size(job):
    """About the bytes of a job's hand-over to its process: its code, stdin and files as its frame carries them."""
    return len(job.code) + len(job.stdin) + sum(map(len, job.files.values()))


class Placement:
    """Chooses each job's process and hands the job to it. `zygotes` (tier name → zygote_handle.Zygote), `loaded` (the
    top-level modules every tier has), the runner's `channel`, the controller's `pump` and `poller`, and `keeper` (the
    ReuseKeeper, which answers for the reuse processes)."""

    def __init__(self, zygotes, loaded, channel, pump, poller, keeper):
        self.zygotes, self.loaded, self.channel = zygotes, loaded, channel
        self.pump, self.poller, self.keeper = pump, poller, keeper

    def tier_for(self, job):
        """(zygote, waited_ms): the job's zygote, once it has a spare child, a cheaper one when the job's tier died,
        and how long the job waited for it to warm (None: it did not); the zygote None when the job's `wait_ms` (what
        is left of its queue timeout) ran out while its tier warmed."""
        waited_ms = None
        channel = self.channel
        while True:
            z = self.zygotes[pick_tier(job.code, {n for n, z in self.zygotes.items() if not z.dead}, self.loaded)]
            if not z.warm and not z.dead:  # the runner allows a job that waits for a warming tier more time
                channel.send({'op': 'waiting', 'id': job.id, 'tier': z.name})
                t0 = time.perf_counter()
                end = None if job.wait_ms is None else t0 + job.wait_ms / 1000
                while not z.ready and not z.dead and not channel.closing:
                    if end is None:
                        self.pump(-1)
                        continue
                    left = end - time.perf_counter()
                    if left <= 0:
                        return None, job.wait_ms
                    self.pump(max(1, int(left * 1000)))
                waited_ms = (time.perf_counter() - t0) * 1000
            while not z.ready and not z.dead and not channel.closing:
                self.pump(-1)
            if not z.dead or z.name == 'bare':
                return z, waited_ms

    def take_process(self, job):
        """The process the job runs in, its job handed to it (a `Run`): its tier's reuse process when the job may run
        there and it takes the job, else the tier's spare; or the result of a job that cannot run (its tier still
        warming at the end of its wait, the zygote gone, the spare changed by an earlier job, three spares gone)."""
        reuse = job.isolation == 'reuse'
        refused = self.keeper.refusal(job)
        for _ in range(3):  # an earlier job may have killed the spare job process: take the next one
            z, waited_ms = self.tier_for(job)
            if z is None:
                result = failed(
                    job.id,
                    'queue_timeout',
                    'TierWarming',
                    'the tier this job needs was still warming when its queue timeout ran out (%d ms)' % job.wait_ms,
                )
                result['waited_ms'] = waited_ms
                return result
            run = None
            if reuse and refused is None:
                r, refused = self.keeper.take(z, job)
                if r is not None:
                    self.keeper.running = r  # its own, until its job is answered: settle leaves it to this
                    run = Run(job, z, r.pid, (r.job_w, r.out_r, r.err_r, r.rep_r), r, refused, waited_ms)
            if run is None:
                if z.dead or self.channel.closing or z.spare is None:
                    return failed(job.id, 'killed', 'ZygoteExited', 'the %s zygote is gone' % z.name, 'zygote')
                if reuse:
                    z.ask_reuse()  # for the next reuse job of this tier
                run = self.take_spare(z, job, refused, waited_ms)
                if run is None:
                    continue
                if isinstance(run, dict):
                    return run
            # A job larger than a pipe holds took a while to reach its process: the runner's hard deadline counts from
            # here, as the job's own does (Run.t0).
            if job_size(job) > PIPE_BYTES:
                self.channel.send({'op': 'started', 'id': job.id})
            return run
        return failed(job.id, 'killed', 'SpareExited', 'the job process was killed before its job came', 'zygote')

    def take_spare(self, z, job, refused, waited_ms):
        """Tier `z`'s spare with the job written to it (a `Run`); the result of a job that cannot run when an earlier
        job changed the spare (the sandbox is replaced); None when the spare is gone (the next one is taken)."""
        try:
            os.kill(z.pid, signal.SIGCONT)  # a job of a reuse process may have stopped it: it reports this job's end
        except OSError:
            pass
        pid, fds = z.spare
        z.spare = None
        z.ready = False
        z.ask()  # the next job process is forked while this job runs
        try:
            if tampered(pid):  # reniced, limited, pinned by a job that ran while it waited
                os.kill(pid, signal.SIGKILL)
                for fd in fds:
                    os.close(fd)
                return failed(
                    job.id,
                    'infra_error',
                    'SandboxTampered',
                    'an earlier job changed the limits of this sandbox\'s processes; the sandbox is replaced',
                    'tampered',
                )
            if signalled(pid):
                # an earlier job signalled it, and the signal waits (a stopped process keeps it): it would end this job
                os.kill(pid, signal.SIGKILL)
                raise OSError('a signal is pending for the spare job process')
            self.limit(z, pid, job)
            os.kill(pid, signal.SIGCONT)  # or a job stopped it
            self.hand_over(pid, fds[0], job_bytes(job, None))
            return Run(job, z, pid, fds, None, refused, waited_ms)  # its time runs from here
        except OSError:
            for fd in fds:
                os.close(fd)
            return None

    def hand_over(self, pid, job_w, data):
        """Writes job `data` to spare `pid`'s job pipe (the job process reads it all before it runs anything). What the
        pipe does not take at once goes as the process reads it, the controller pumping its channel and its zygotes
        meanwhile; raises OSError when the process is gone, or did not read it within HAND_OVER_WAIT_S (it is
        killed)."""
        if len(data) <= PIPE_BYTES:
            os.write(job_w, data)  # an empty pipe takes it whole
            return
        grow_pipe(job_w, BIG_BUFFER)
        os.set_blocking(job_w, False)
        view = memoryview(data)
        until = time.perf_counter() + HAND_OVER_WAIT_S
        self.poller.register(job_w, select.POLLOUT)
        try:
            while view:
                try:
                    view = view[os.write(job_w, view) :]
                except BlockingIOError:
                    left = until - time.perf_counter()
                    if left <= 0:
                        os.kill(pid, signal.SIGKILL)
                        raise OSError('the spare job process did not read its job')
                    self.pump(max(1, int(left * 1000)))
        finally:
            self.poller.unregister(job_w)

    @staticmethod
    def limit(z, pid, job):
        """Sets the job's own limits on spare `pid` of zygote `z`, from here (prlimit): address space (its size plus
        memory_mb), CPU time (a backstop past timeout_ms) and, where configured, processes."""
        # the zygote's size: the spare's, forked from it
        mem = address_space(int(os.pread(z.statm, 256, 0).split()[0]), job.memory_mb)
        resource.prlimit(pid, resource.RLIMIT_AS, (mem, mem))
        cpu = cpu_backstop_s(job.timeout_ms)
        resource.prlimit(pid, resource.RLIMIT_CPU, (cpu, cpu + 1))
        if NPROC:
            resource.prlimit(pid, resource.RLIMIT_NPROC, (NPROC, NPROC))


# ---------------- sandfleet_sandbox/reuse_keeper.py
# The controller's reuse processes, at most one a tier (its zygote's `reuser`, a reuse_handle.ReuseHandle): which may
# take a job (idle, running nothing since its verdict, untouched from outside, its tenant's), its limits for the job and
# the job handed to it; after the job, its verdict awaited and the dirs cleaned; one that broke the protocol, ran between
# its jobs, was changed from outside or ran another tenant's jobs dropped, the runner told (`retired`). Why a process of
# one tenant cannot reach the jobs of another: docs/reuse-trust.md.

import os
import resource
import select
import time


# How long a job waits for the verdict of its tier's reuse process before the process is retired as stuck.
CHECK_WAIT_S = 2.0
# How long a reuse process, let run, may leave a job larger than its pipe holds unread (its loop reads at once): each
# pipe-full of it (a job of megabytes, at most HAND_OVER_WAIT_S in all).
TAKE_WAIT_MS = 1000


class ReuseKeeper:
    """The reuse processes of `zygotes` (tier name → zygote_handle.Zygote) as the controller keeps them, with the
    runner's `channel` (told of each retirement), the controller's `pump`, `poller` and `by_fd` (fd → what the poll
    wakes for: each reuse process's report pipe is added there), and `leftovers` (cleanup.Leftovers). Its state:
    `running` (the
    reuse process running the job, if one is), `answered` ((zygote, process) of the job just answered: its dirs are
    cleaned after its verdict), `last_clean` (the process that ran the last job and passed its check since, if one
    did)."""

    def __init__(self, zygotes, channel, pump, poller, by_fd, leftovers):
        self.zygotes, self.channel, self.pump = zygotes, channel, pump
        self.poller, self.by_fd, self.leftovers = poller, by_fd, leftovers
        self.running = None
        self.answered = None
        self.last_clean = None

    @staticmethod
    def refusal(job):
        """Why a job that asks for `reuse` runs forked whatever its tier's reuse process (`unsupported`, `static`), None
        when it may run reused; None too for a job that asks for `fork`."""
        if job.isolation != 'reuse':
            return None
        if not TAGS_WORK:
            return 'unsupported'
        return 'static' if static_taint(job.code) else None

    def check_idle(self, tenant):
        """Before each job: every idle reuse process runs nothing (blocked or stopped, its CPU time where it was when it
        was first found so after its verdict: no job ran since but its own, the controller runs one at a time); one that
        ran is dropped before another job runs beside it. One that ran another tenant's jobs is stopped while this job
        runs (a job of its own tenant may run beside it: what it could do to that job is its tenant's own doing)."""
        for z in self.zygotes.values():
            r = z.reuser
            if r is None or r.state != 'idle':
                continue
            if r is self.last_clean and r.tenant == tenant:
                continue  # it just gave its verdict; a job of its tenant comes
            if not r.settled(full=False):
                self.drop(z, r, 'tampered', r.violation or 'it ran between its jobs')
            elif r.jobs > 0 and r.tenant != tenant and not r.isolate():
                self.drop(z, r, 'tampered', 'it did not stop')

    def take(self, z, job):
        """Tier `z`'s reuse process with `job` handed to it (its limits set, let run, the job written) and None; or None
        and why not: none is idle (`warming`), it runs another tenant's jobs (`tenant`), or what the controller reads of
        it from outside says it ran, wrote or was changed since its last verdict (`tampered`). The job then runs
        forked."""
        r = self.idle_process(z)
        if r is None:
            return None, 'warming'
        if r.gone():  # killed while idle (a job of another tier can)
            self.drop(z, r, 'exit', 'the process ended between jobs')
            return None, 'warming'
        tenant = job.tenant
        if r.jobs > 0 and r.tenant != tenant:
            self.drop(z, r, 'tenant', 'it ran jobs of another tenant')
            z.ask_reuse()
            return None, 'tenant'
        # Before any of its code runs again: running nothing since its verdict (check_idle, a moment ago), silent and
        # alone; and, unless it ran the last job and passed its check since (no other job's code ran), its limits and
        # signals as they were. (The process that ran the last job and passed its check since has run nothing but its
        # own loop: it need not be found blocked first.)
        if (r is not self.last_clean and r.idle_cpu is None and not r.settled(full=False)) or not r.quiet():
            self.drop(z, r, 'tampered', r.violation or 'it ran, wrote or was not alone between its jobs')
            return None, 'tampered'
        if self.last_clean is not r and (tampered(r.pid, reused=True) or signalled(r.pid)):
            self.drop(z, r, 'tampered', 'an earlier job changed the limits or signals of this reuse process')
            return None, 'tampered'
        nonce = os.urandom(12).hex()
        try:
            r.cpu_at = r.cpu_seen = r.idle_cpu if r.idle_cpu is not None else r.cpu_ns()
            self.limit(r, job)
            r.thaw()
            data = job_bytes(job, nonce, wait_files=bool(job.fetch_files))
            if len(data) > PIPE_BYTES:
                grow_pipe(r.job_w, BIG_BUFFER)
            taken = r.send(data, min(job.timeout_ms, TAKE_WAIT_MS) / 1000, HAND_OVER_WAIT_S)
        except (OSError, ValueError):  # gone, or a limit it lowered cannot be raised
            self.drop(z, r, 'exit' if r.gone() else 'tampered', 'its limits cannot be set for its next job')
            return None, 'warming'
        if not taken:  # it did not read its job: what runs in it is not the reuse process's loop (the job runs forked)
            self.drop(z, r, 'violation', 'it did not read its job')
            return None, 'tampered'
        r.begin(nonce, tenant)
        return r, None

    @staticmethod
    def limit(r, job):
        """A reuse process's limits for its next job: the soft ones only (a hard limit lowered could not be raised for
        the next job), what the job may use past what the process holds: its size plus memory_mb, its CPU time so far
        plus the backstop. (Raising them is refused inside: reuse_process.Watch.)"""
        for limit, value in (
            (resource.RLIMIT_AS, address_space(r.pages(), job.memory_mb)),
            (resource.RLIMIT_CPU, r.cpu_seen // 10**9 + cpu_backstop_s(job.timeout_ms)),
        ):
            # as the zygote left it: the check, inside and from here, holds it
            hard = SPARE_LIMITS[RLIMITS.index(limit)][1]
            resource.prlimit(r.pid, limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))
        if NPROC and r.jobs == 0:
            resource.prlimit(r.pid, resource.RLIMIT_NPROC, (NPROC, NPROC))

    def job_ended(self, z, r, timed_out):
        """Reuse process `r` of tier `z` after its job: counted, when it reported the job's end; else dropped (it ended
        as a forked job ends: tainted, `timed_out`, crashed, os._exit)."""
        if r.done is None:
            what = 'timeout' if timed_out else 'taint' if r.tainted else 'exit'
            self.drop(z, r, what, r.tainted or 'the process ended with its job')
        else:
            r.since = time.perf_counter()
            r.jobs += 1

    def violated(self, run, alive):
        """The job's reuse process broke the protocol (a frame out of order or with another nonce, not alone at its
        end, its job never read): it is killed, what the job left is swept as after any job (`alive`: the zygotes live
        as it began), and the job answered infra_error: nothing the process said can be told from what a job wrote
        itself. A job it never took is answered as one an earlier job kept from running (SandboxTampered: the runner
        runs it elsewhere)."""
        z, r = run.z, run.reuser
        ran = not r.unread()
        what = r.violation
        r.kill()
        self.await_exit(z, r)
        self.drop(z, r, 'violation', what)
        self.running = None
        reason, _ = self.leftovers.after_job(alive, False)
        if not self.leftovers.dirs.clean():
            reason = reason or 'cleanup'
        self.last_clean = None
        if not ran:
            return failed(
                run.job.id,
                'infra_error',
                'SandboxTampered',
                'the reuse process given this job did not take it (an earlier job took it over); the job did not run',
                reason or 'tampered',
            )
        result = failed(
            run.job.id,
            'infra_error',
            'ReuseViolation',
            'the reuse process that ran this job broke the executor\'s protocol (%s): it was killed, '
            'and nothing it said answers the job' % what,
            reason,
        )
        result.update({'duration_ms': run.duration, 'tier': z.name, 'isolation': 'reuse'})
        return result

    def await_exit(self, z, r):
        """Pumps until zygote `z` reports the exit of reuse process `r` (killed, or retired by its check), at most a
        second."""
        until = time.perf_counter() + 1
        while r.pid not in z.exits and not z.dead and time.perf_counter() < until:
            self.pump(max(1, int((until - time.perf_counter()) * 1000)))

    def clean_after(self):
        """After a job answered from a reuse process: its verdict awaited (the process dropped the job's objects, whose
        finalizers may have written files), then the work dir and scratch dirs cleaned. What cannot be cleaned breaks
        the sandbox: every later job is answered infra_error, and the runner replaces it."""
        z, r = self.answered
        self.answered = None
        self.await_verdict(z, r)
        if r.state == 'gone' and z.reuser is r:
            # retired: it exits; the next job finds it reaped, as a forked job's process
            self.await_exit(z, r)
            self.settle()
        if not self.leftovers.dirs.clean(ipc=False):
            self.leftovers.broken = 'what a job left could not be removed'
        if r.state == 'idle' and z.reuser is r:
            if r.drop_after is not None:
                self.drop(z, r, r.drop_after, 'its job ran out of memory')
            else:
                self.last_clean = r  # found blocked, its CPU time taken, before the next job (check_idle)
        elif r.violation is not None and z.reuser is r:
            self.drop(z, r, 'violation', r.violation)

    def await_verdict(self, z, r):
        """Waits for reuse process `r` of tier `z` to end its check, at most CHECK_WAIT_S; past it, drops it as
        stuck."""
        until = r.since + CHECK_WAIT_S
        while (
            r.state == 'checking'
            and r.violation is None
            and r.pid not in z.exits
            and z.reuser is r
            and time.perf_counter() < until
        ):
            self.pump(max(1, int((until - time.perf_counter()) * 1000)))
        if r.violation is not None and z.reuser is r:
            self.drop(z, r, 'violation', r.violation)
        elif r.state == 'checking' and z.reuser is r:
            self.drop(z, r, 'stuck', 'no verdict within %d ms of its job' % (CHECK_WAIT_S * 1000))

    def idle_process(self, z):
        """Tier `z`'s reuse process once it is idle (waiting out its check, at most CHECK_WAIT_S); None when it has none
        ready (one is asked for)."""
        r = z.reuser
        if r is not None and r.state == 'checking':
            self.await_verdict(z, r)
        if z.reuser is not None and z.reuser.pid in z.exits:
            self.settle()
        r = z.reuser
        if r is None:
            z.ask_reuse()
        return r if r is not None and r.state == 'idle' else None

    def drop(self, z, r, what, detail):
        """Retires reuse process `r` of tier `z` and tells the runner why."""
        r.kill()
        try:
            self.poller.unregister(r.rep_r)
        except (KeyError, ValueError):
            pass
        self.by_fd.pop(r.rep_r, None)
        r.close()
        if z.reuser is r:
            z.reuser = None
        z.cpu_us.pop(r.pid, None)
        if z.exits.pop(r.pid, None) is None:
            z.forget.add(r.pid)
        self.channel.send({'op': 'retired', 'tier': z.name, 'reason': what, 'detail': detail[:200], 'jobs': r.jobs})

    def settle(self):
        """After each poll round: the report pipe of each new reuse process watched; those gone (a failed check, an
        exit) dropped; the exits of those dropped before their exit came forgotten."""
        for z in self.zygotes.values():
            for pid in [p for p in z.forget if p in z.exits]:
                z.forget.discard(pid)
                del z.exits[pid]
                z.cpu_us.pop(pid, None)
            r = z.reuser
            if r is None or r is self.running:
                continue
            if r.rep_r not in self.by_fd:
                self.by_fd[r.rep_r] = r
                self.poller.register(r.rep_r, select.POLLIN)
            if r.violation is not None and r.state != 'checking':  # while it checks, await_verdict answers for it
                self.drop(z, r, 'violation', r.violation)
            elif r.state == 'gone':
                if isinstance(r.retire, list) and len(r.retire) == 2:
                    what, detail = r.retire
                else:
                    what, detail = 'check', str(r.retire)
                self.drop(z, r, str(what), str(detail))
            elif r.pid in z.exits:
                self.drop(z, r, 'exit', 'the process ended between jobs')


# ---------------- sandfleet_sandbox/judge_run.py
# One judge in the controller (a `judge` frame, a JudgeJob), from its frame to its result: the program compiled
# once, then run on each test in a fresh process, each run a step of its own (a JudgeStep: its tier or its reuse
# process, limits, deadline, capture, sweep and clean-up, on the path an `exec` job takes: placement.py, job_run.py), each
# answered as it ends with a `tested` frame; a checker, when the judge has one, run the same way after each test whose
# program is gone. What the runner compares, it compares outside: the expected outputs never come here (a checker's
# answers come only with a checker, each written for its run alone, after the program's run). The job process's end of
# a step is judge_job_process.py.
#
# The executor knows nothing of languages: the runner sends the compile step's argv and the binary's run argv; Python
# alone has a path of its own (the code compiled to bytecode once, here, and each test a fork of its warm zygote, or a
# run in its reuse process at `reuse`).
#
# Frames (docs/executor-protocol.md, "Judging"): `compiled` for each compile step that ran (`binary`, base64, with a
# compiler's output that the runner may cache), `tested` for each test that ran, then the job's `result` (its status
# `ok` when the judge ran to its end or its stop; a fleet status when it could not; `retire` as any job's). The runner's
# word on the judge (`judge_ack`, `judge_stop`) is read between two tests, from the channel's `words`.

import base64
import time
import traceback
import types


# What a step's `compiled` or `tested` frame is sent with, of its result frame (the rest, files and tier, stays here).
STEP_FIELDS = ('status', 'exit_code', 'stdout', 'stderr', 'duration_ms', 'truncated', 'error')
# What a `tested` frame tells of the checker's run.
CHECKER_FIELDS = ('status', 'exit_code', 'stdout', 'stderr', 'error')
# Results that mean the judge cannot go on here: the fleet's (another sandbox may judge it).
FLEET = ('infra_error', 'queue_timeout')
# A checker's files, as its argv names them.
CHECKER_ARGS = ('input', 'output', 'answer')
NO_FILES = types.MappingProxyType({})


class Halt(Exception):
    """The judge cannot go on: `result` is the fault that ends it (a fleet status, or a word of the runner's refused at
    its parse)."""

    def __init__(self, result):
        super().__init__(result['status'])
        self.result = result


def b64(text):
    return base64.b64encode(text.encode()).decode()


def step_frame(op, job_id, result):
    """A `compiled` or `tested` frame of judge `job_id`: its step's result frame's STEP_FIELDS, and its CPU time when it
    is known."""
    frame = {'op': op, 'id': job_id}
    for key in STEP_FIELDS:
        frame[key] = result[key]
    if 'cpu_ms' in result:
        frame['cpu_ms'] = result['cpu_ms']
    return frame


class Judge:
    """One judge frame, `job` (a JudgeJob), on the controller's `channel` (frames out; `words`, the runner's word
    on the judge, in) and its `pump` (one poll round); `run_step(step)` runs one JudgeStep as the controller runs
    an `exec` job and puts it behind as between two jobs: (its result frame, its job process's report)."""

    def __init__(self, job, channel, pump, run_step):
        self.job, self.id, self.channel, self.pump, self.run_step = job, job.id, channel, pump, run_step
        self.t0 = time.perf_counter()
        self.wait_until = None if job.wait_ms is None else self.t0 + job.wait_ms / 1000
        self.retire = None  # why the sandbox retires after a run (no more runs here), or None
        self.cpu_ms = 0.0
        # The runner's word: its stop; the tests it found passed (`acked`: the highest index, in order). With an
        # `ack_window` of W, test i starts only once tests up to i - W are acked: the runner compares a test while the
        # next runs, and a failing test costs at most W - 1 more (0: no acks, the runner only stops).
        self.stop = False
        self.acked = -1

    def run(self):
        """Judges the job: its result frame, once every test that runs has been answered."""
        try:
            self.judge()
        except Halt as halted:
            return self.end(halted.result)
        return self.end(None)

    def judge(self):
        job = self.job
        program = self.ready('program', job.program)
        if program is None:
            return
        checker = None
        if job.checker is not None:
            checker = self.ready('checker', job.checker)
            if checker is None:
                return
        for index, test in enumerate(job.tests):
            if self.retire is not None or not self.may_start(index):
                break
            result, report = self.run_one(self.test_step(program, test, checker is not None))
            tested = step_frame('tested', self.id, result)
            tested['index'] = index
            for key in ('returned', 'returned_error'):  # a call test's value, as JSON, or why it has none
                if report is not None and key in report and type(report[key]) is str:
                    tested[key] = report[key]
            passed = result['status'] == 'ok' and not result['truncated']['stdout']
            if checker is not None and passed and self.retire is None:
                checked, _ = self.run_one(self.checker_step(checker, test, result['stdout'], job.answers[index]))
                tested['checker'] = {key: checked[key] for key in CHECKER_FIELDS}
                passed = checked['status'] == 'ok'
            self.channel.send(tested)
            if job.stop_on_failure and not passed:
                break  # what the runner would stop at (a wrong output it compares itself: it asks for the stop)

    def heard(self):
        """Takes the runner's words that came: this judge's acks and its stop; a word of it refused at its parse ends
        the judge (answered as any refused frame is); words of a judge already answered are no one's."""
        words = self.channel.words
        for word in words:
            if type(word) is FrameError:
                if word.frame_id == self.id:
                    words.clear()
                    raise Halt(refused(word))
                self.channel.log('error', 'a %s frame refused, of no judge that runs: %s' % (word.op, word))
            elif word.id != self.id:
                continue
            elif type(word) is JudgeStop:
                self.stop = True
            else:
                self.acked = max(self.acked, word.index)
        words.clear()

    def may_start(self, index):
        """Whether test `index` may run: the runner has not stopped the judge (nor closed the channel), and (with a
        window) has found every test up to index - window passed; waits for its word as long as it takes (the runner's
        hard deadline bounds the judge's every step)."""
        window = self.job.ack_window
        channel = self.channel
        self.pump(0)
        self.heard()
        while not self.stop and not channel.closing and window > 0 and index - window > self.acked:
            self.pump(-1)
            self.heard()
        return not self.stop and not channel.closing

    def ready(self, step, program):
        """`program` (a JudgeProgram) made ready to run: ('python', code object) or ('binary', bytes); None when
        it did not compile (answered with its `compiled` frame)."""
        if program.runtime == 'python':
            return self.compile_python(step, program)
        if program.binary is not None:  # the runner's compile cache: compiled before, by the same compiler
            return 'binary', program.binary
        job = self.job
        output = program.output
        result, _ = self.run_one(
            self.step(
                '',
                None,
                (EXEC, (program.compile, None)),
                '',
                types.MappingProxyType({program.source: b64(program.code)}),
                (output,),
                job.compile_timeout_ms,
                job.compile_memory_mb,
                'fork',
            )
        )
        compiled = step_frame('compiled', self.id, result)
        compiled['step'] = step
        binary = result['files'][output] if result['status'] == 'ok' and output in result['files'] else None
        if result['status'] == 'ok' and binary is None:
            errors = result['fetch_errors'] if 'fetch_errors' in result else {}
            why = errors[output] if output in errors else 'not written'
            compiled['status'] = 'error'
            compiled['stderr'] = result['stderr'] + '\nthe compiler\'s output %s: %s\n' % (output, why)
        if binary is not None:
            compiled['binary'] = binary
        self.channel.send(compiled)
        return None if binary is None else ('binary', base64.b64decode(binary))

    def compile_python(self, step, program):
        """Python's compile step: to bytecode, here, once for every test (as an `exec` job's code is compiled here)."""
        t0 = time.perf_counter()
        c0 = time.thread_time()
        compiled = {'op': 'compiled', 'id': self.id, 'step': step, 'exit_code': 0, 'stdout': '', 'stderr': ''}
        try:
            code = compile(program.code, MAIN_FILE, 'exec', dont_inherit=True)
        except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as e:
            code = None
            compiled['status'] = 'error'
            compiled['exit_code'] = 1
            compiled['stderr'] = ''.join(traceback.format_exception_only(type(e), e))
        else:
            compiled['status'] = 'ok'
        compiled['duration_ms'] = (time.perf_counter() - t0) * 1000
        compiled['cpu_ms'] = round((time.thread_time() - c0) * 1000, 3)
        compiled['truncated'] = {'stdout': False, 'stderr': False}
        compiled['error'] = None
        self.channel.send(compiled)
        return None if code is None else ('python', code)

    def step(self, code, compiled, kind, stdin, files, fetch_files, timeout_ms, memory_mb, isolation):
        """A run of this judge as a JudgeStep: the judge's id, tenant and output cap, what is left of its wait
        for a tier."""
        job = self.job
        wait_ms = None
        if self.wait_until is not None:
            wait_ms = max(0, int((self.wait_until - time.perf_counter()) * 1000))
        return JudgeStep(
            job.id,
            code,
            stdin,
            timeout_ms,
            memory_mb,
            files,
            fetch_files,
            job.max_output_bytes,
            isolation,
            wait_ms,
            job.tenant,
            compiled,
            kind,
        )

    def test_step(self, program, test, checked):
        """The run of the program on one test (a JudgeTest): Python's code object (its call, for a call test),
        or the binary."""
        job = self.job
        runtime, made = program
        if runtime == 'binary':
            kind = (EXEC, (job.program.run, made))
            return self.step('', None, kind, test.stdin, NO_FILES, (), job.timeout_ms, job.memory_mb, 'fork')
        kind = None if test.call is None else (CALL, (test.call.function, test.call.args))
        # a checker's answers are written in the work dir beside the reuse process: its program runs forked
        isolation = 'fork' if checked else job.isolation
        return self.step(
            job.program.code, made, kind, test.stdin, NO_FILES, (), job.timeout_ms, job.memory_mb, isolation
        )

    def checker_step(self, checker, test, output, answer):
        """The checker's run on one test, `checker INPUT OUTPUT ANSWER`: the three files written for it alone, after the
        program's run was swept."""
        job = self.job
        files = types.MappingProxyType(dict(zip(CHECKER_ARGS, map(b64, (test.stdin, output, answer)))))
        runtime, made = checker
        limits = (job.checker_timeout_ms, job.memory_mb, 'fork')
        if runtime == 'binary':
            return self.step('', None, (EXEC, (job.checker.run + CHECKER_ARGS, made)), '', files, (), *limits)
        return self.step(job.checker.code, made, (ARGV, CHECKER_ARGS), '', files, (), *limits)

    def run_one(self, step):
        """One run, as the controller runs an `exec` job: (its result frame, its job process's report); Halt when the
        judge cannot go on (a fleet status)."""
        result, report = self.run_step(step)
        if result['status'] in FLEET:
            raise Halt(result)
        if result['retire']:
            self.retire = result['retire_reason']
        if 'cpu_ms' in result:
            self.cpu_ms += result['cpu_ms']
        return result, report

    def end(self, fault):
        """The judge's result frame: `ok` when it ran to its end or its stop; else the fault that ended it (a fleet
        status: its tier still warming, the sandbox tampered with; a word of the runner's refused)."""
        if fault is not None:
            result = dict(fault)
        else:
            result = failed(self.id, 'ok', '', '')
            result['error'] = None
        result['op'] = 'result'
        result['id'] = self.id
        result['duration_ms'] = (time.perf_counter() - self.t0) * 1000
        result['cpu_ms'] = round(self.cpu_ms, 3)
        if self.retire is not None:
            result['retire'] = True
            if 'retire_reason' not in result:
                result['retire_reason'] = self.retire
        return result


# ---------------- sandfleet_sandbox/controller.py

import base64
import os
import select
import sys



def oom_score_adj(value):
    """Sets this process's OOM score adjustment (writable only while the process is dumpable: no job may run then)."""
    prctl(4, 1)  # PR_SET_DUMPABLE
    try:
        fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)
        try:
            os.write(fd, b'%d' % value)
        finally:
            os.close(fd)
    except OSError:
        pass
    prctl(4, 0)


class Controller:
    """The executor's controller: the runner's `channel`, the `zygotes` (tier name → zygote_handle.Zygote), its one poll
    (`pump`), and for each kind of frame its handler (`handlers`: the frame's type → the method that answers it with a
    result frame: an `exec` job, a judge, a frame refused at its parse). A new kind of job: its frozen type and its
    parser (runner_channel.PARSERS), its handler here; its runs, as a judge's are, through run_job (placement, then
    job_run's Run)."""

    def __init__(self):
        self.channel = RunnerChannel()
        cleanup = Cleanup(WORKDIR, SCRATCH)
        self.ooms = OomCount()
        # what every tier has: the executor's own imports (a job importing only those runs on bare)
        self.loaded = frozenset(m.split('.')[0] for m in sys.modules)
        # bare first: forked before anything else is imported or allocated here (each page it holds is copied at each
        # fork)
        self.zygotes = {'bare': Zygote('bare', [])}
        self.planned = plan_tiers()
        for name in self.planned:
            if name not in self.zygotes:
                self.zygotes[name] = Zygote(name, list(self.zygotes.values()))
        self.dead = []  # zygotes that died and are not reaped yet
        self.told = None  # after `ready`: each tier's state the runner was told (tell)
        self.leftovers = Leftovers(cleanup, {z.pid for z in self.zygotes.values()})
        # fd → what the poll wakes for: a zygote's socket, a reuse process's report pipe (the channel's is its own)
        self.by_fd = {z.sock.fileno(): z for z in self.zygotes.values()}
        self.poller = select.poll()
        self.poller.register(self.channel.fd_in, select.POLLIN)
        for fd in self.by_fd:
            self.poller.register(fd, select.POLLIN)
        self.keeper = ReuseKeeper(self.zygotes, self.channel, self.pump, self.poller, self.by_fd, self.leftovers)
        self.placement = Placement(self.zygotes, self.loaded, self.channel, self.pump, self.poller, self.keeper)
        self.handlers = {ExecJob: self.run_exec, JudgeJob: self.run_judge, FrameError: refused}
        self.channel.allocate()

    def pump(self, timeout_ms):
        """One poll round: zygote messages, reuse processes' reports and channel input. Returns the fds that were
        readable."""
        events = self.poller.poll(timeout_ms)
        for fd, _ in events:
            z = self.by_fd.get(fd)
            if isinstance(z, ReuseHandle):
                if not z.read():
                    self.poller.unregister(fd)
                    del self.by_fd[fd]
            elif z is not None:
                kind = z.on_message()
                if kind is None:
                    self.poller.unregister(fd)
                    del self.by_fd[fd]
                    self.dead.append(z.pid)  # reaped once it has exited
                    self.channel.log('error', 'zygote %s exited' % z.name)
                if kind is None or kind == b'r':
                    self.tell()
            elif fd == self.channel.fd_in:
                if not self.channel.read():
                    self.poller.unregister(fd)
        self.settle()
        return events

    def settle(self):
        """Reaps the zygotes that died (an OOM kill, a job's kill); the reuse processes settled (ReuseKeeper.settle)."""
        for pid in list(self.dead):
            try:
                reaped = os.waitpid(pid, os.WNOHANG)[0] == pid
            except ChildProcessError:
                reaped = True
            if reaped:
                self.dead.remove(pid)
        self.keeper.settle()

    def tell(self):
        """After `ready`: one `tier` frame per tier that finished warming, or died."""
        if self.told is None:
            return
        for z in self.zygotes.values():
            state = 'dead' if z.dead else 'warm' if z.warm else None
            if state is None or self.told.get(z.name) == state:
                continue
            self.told[z.name] = state
            if z.name != 'bare' or z.dead:
                self.channel.send({'op': 'tier', 'name': z.name, 'ready': not z.dead, 'ms': z.ms, 'modules': z.modules})

    def serve(self):
        bare = self.zygotes['bare']
        while not bare.ready and not bare.dead:
            self.pump(-1)
        if bare.dead:
            sys.exit(1)
        self.channel.send(
            {
                'op': 'ready',
                'protocol': 1,
                'pid': os.getpid(),
                'python': sys.version.split()[0],
                'tiers': self.planned,
                'packages': {},
                'isolation': ['fork', 'reuse'] if TAGS_WORK else ['fork'],
            }
        )
        self.told = {}
        self.tell()
        channel, keeper, handlers = self.channel, self.keeper, self.handlers
        while not channel.closing:
            if channel.jobs:
                job = channel.jobs.pop(0)
                channel.send(handlers[type(job)](job))
                if keeper.answered is not None:
                    keeper.clean_after()
                self.settle()  # a reuse process whose verdict came with its job's end
            else:
                self.pump(-1)
        self.leftovers.sweep_all()
        remove_tree(WORKDIR)

    def run_exec(self, job):
        """Runs an `exec` job (a frames.ExecJob) and answers its result frame."""
        result, _ = self.run_job(job)
        return result

    def run_judge(self, job):
        """Judges a `judge` job (a JudgeJob) and answers its result frame, its `compiled` and `tested` frames
        sent as its steps end (judge_run.py)."""
        return Judge(job, self.channel, self.pump, self.run_step).run()

    def run_step(self, step):
        """One step of a judge (a JudgeStep) run as an `exec` job is, then put behind as between two jobs (a
        reuse process's verdict awaited, the dirs cleaned): (its result frame, its job process's report)."""
        answer = self.run_job(step)
        if self.keeper.answered is not None:
            self.keeper.clean_after()
        self.settle()
        return answer

    def run_job(self, job):
        """Runs a job (a frames.ExecJob or JudgeStep) on its tier's reuse process when it asks for `reuse` and one is
        idle and may take this code, else on the tier's spare, forked for it: (its result frame, the report its job
        process wrote: a dict, or None)."""
        if self.leftovers.broken is not None:
            reason = self.leftovers.broken + '; the sandbox is replaced'
            return failed(job.id, 'infra_error', 'SandboxTampered', reason, 'cleanup'), None
        self.keeper.check_idle(job.tenant)
        alive = [z for z in self.zygotes.values() if not z.dead]  # one that dies while the job runs retires the sandbox
        run = self.placement.take_process(job)
        if type(run) is dict:
            return run, None  # the job did not run: its result
        run.watch(self.pump, self.poller, self.channel)
        r = run.reuser
        if r is not None and r.violation is not None:
            run.capture.unwatch()
            return self.keeper.violated(run, alive), None
        run.after(self.leftovers, self.keeper, alive)
        return run.result(self.ooms.killed), run.report


def main():
    if os.environ.get(SANDBOX_ENV['seccomp']):
        add_seccomp(base64.b64decode(os.environ.pop(SANDBOX_ENV['seccomp'])))
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: what a job leaves behind is reparented to us
    prctl(4, 0)  # PR_SET_DUMPABLE 0: job processes (same uid) cannot ptrace the controller or the zygotes
    for k in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        os.environ[k] = '1'
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
