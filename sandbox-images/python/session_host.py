#!/usr/bin/env python3
# Built by sandbox-images/python/build.py from sandfleet_sandbox/: sandbox_env, libc, limits, frames, files, cell, session, agent, host.
# Edit those and run the build; a test fails while this file is not what the build makes of them.
"""sandfleet session host: keeps stateful Python sessions, forking before every cell.

Runs inside the sandbox. The runner writes NDJSON frames on stdin:
  {"op": "open", "sid", "memory_mb"}
                               -> forks a session listening on <sockdir>/<sid>.sock, answers
                                  {"op": "opened", "sid", "pid", "socket", "isolated"} on stdout
                                  (or {"op": "opened", "sid", "error"}); with "agent": true also
                                  an agent (agent.py: the session's files and processes) on
                                  <sockdir>/<sid>.agent.sock ("agent_socket" in "opened"), and
                                  "env" (set in the session's environment), "home" (its working
                                  directory and HOME, where the session has it as a private
                                  place); "memory_mb" is the session's memory: its processes'
                                  limit, and the size of each of its private tmpfs
  {"op": "kill", "pid": N}     -> kills the process holding a session (pids are the host's own,
                                  which differ from the runner's when the host has a pid namespace);
                                  with it every process of the session (see kill_session)
  {"op": "shutdown"}           -> exits
Each session then talks NDJSON over its own Unix socket (one connection; the socket's path is
unlinked once the runner is connected):
  {"op": "exec", "id", "code", "stdin", "timeout_ms", "memory_mb", "files", "fetch_files",
   "max_output_bytes", "isolation", "wait_ms", "tenant"} (the executor's exec frame, parsed once by
   frames.exec_job; one it refuses is answered status infra_error, BadFrame, and nothing runs)
   -> {"op": "result", "id", "status", "stdout", "stderr", "exit_code", "duration_ms",
   "truncated", "error", "display", "files", "pid"}
  {"op": "close"}              -> the session ends

Isolation of one session from the others (`isolated`): with SANDFLEET_SESSION_NAMESPACES=1 (the
process driver sets it) and where the kernel lets an unprivileged process make namespaces (inside
bubblewrap it does), each session gets its own user, mount, pid,
IPC and network namespaces. Its first process there (pid 1, "init") mounts its own /proc (only
its processes), a fresh tmpfs on /tmp (its work dir), /mnt, /dev/shm and /home/user, hides the socket directory,
and reaps (with an agent, the init is the agent, and leaves when the runner closes the agent's
socket). `pid` in "opened" is then that init's (killing it ends every process of the session)
and results carry no `pid`. An isolated session holds at most SANDFLEET_SESSION_MAX_PROCS (512)
processes (RLIMIT_NPROC, counted in its own user namespace). Without namespaces the session runs
as a plain process and `pid` in each result is the process holding the session now.

Fork per cell, with the next cell's process forked ahead of time: the session process S holds
the state; right after it becomes the session it forks R, which waits for the next frame on the
socket, reads it, tells S (timeout, cap) over a pipe and runs the cell with fd 0/1/2 on a memfd
and pipes. S drains the output pipes (capped) and the result pipe, and answers. When the cell
ended (ok or raised), R becomes the session (S hands over and exits) and forks the next R. When
the cell passes its timeout, or R dies, S kills R's process group and stays the session: the
state before the cell survives. R dies with S (PR_SET_PDEATHSIG) until it takes over. An R that
waited SANDFLEET_SESSION_SPARE_IDLE_S (10) seconds for a frame exits; S forks the next one when a
frame comes (that cell then pays for the fork).

Built from the modules of sandbox-images/python/sandfleet_sandbox/ by build.py, this module last.
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


# ---------------- sandfleet_sandbox/cell.py
# A session's cell: its files written, its code run in the session's globals (a Jupyter kernel's display of its value
# and figures), its files read back; the result written to the session process.

import ast
import base64
import io
import json
import linecache
import os
import resource
import sys
import traceback


DEVNULL = os.open(os.devnull, os.O_RDWR)
_dumps = json.dumps
_loads = json.loads


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# A value's rich forms, as a Jupyter kernel's display formatter asks for them: MIME type, method.
REPR_METHODS = (
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("text/latex", "_repr_latex_"),
    ("image/svg+xml", "_repr_svg_"),
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("application/json", "_repr_json_"),
)


def mime_bundle(value):
    """{MIME type: content} of a cell's value: its repr, and each `_repr_*_` form its class defines
    (binary forms base64, JSON as text); a form that raises or gives None is left out."""
    bundle = {"text/plain": repr(value)}
    if isinstance(value, type):
        return bundle
    for mime, name in REPR_METHODS:
        if getattr(type(value), name, None) is None:
            continue
        try:
            data = getattr(value, name)()
        except Exception:  # noqa: BLE001 - a broken form is left out, as Jupyter leaves it
            continue
        if isinstance(data, tuple):  # (data, metadata)
            data = data[0] if data else None
        if isinstance(data, bytes):
            data = base64.b64encode(data).decode()
        elif mime == "application/json" and data is not None:
            data = _dumps(data)
        if isinstance(data, str):
            bundle[mime] = data
    return bundle


def open_figures():
    """The matplotlib figures a cell left open, as Jupyter's inline backend shows them when a cell
    ends: one {"text/plain", "image/png"} item each (Agg), then closed."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    shown = []
    try:
        for num in plt.get_fignums():
            fig = plt.figure(num)
            png = io.BytesIO()
            fig.savefig(png, format="png", bbox_inches="tight")
            shown.append({"text/plain": repr(fig), "image/png": base64.b64encode(png.getvalue()).decode()})
        plt.close("all")
    except Exception as e:  # noqa: BLE001 - the cell's own figure failed to draw
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
    return shown


def run_code(code, g, n, main_key=None, traceback_to_stderr=True):
    """Runs one cell in globals g; returns (status, exit_code, error, display). With `main_key`, the display of the
    cell's value (not those of its figures) carries that key. An exception's traceback is its error's, and written to
    stderr too unless `traceback_to_stderr` is False (a streamed cell: a kernel reports it once, as its error)."""
    name = "<cell %d>" % n
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    try:
        tree = ast.parse(code, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, name, "exec"), g)
        display = []
        if last is not None:
            value = eval(compile(last, name, "eval"), g)
            if value is not None:
                g["_"] = value
                display = [mime_bundle(value)]
                if main_key:
                    display[0][main_key] = ""
        return "ok", 0, None, display + open_figures()
    except SystemExit as e:
        if e.code is None or e.code == 0:
            return "ok", 0, None, []
        if isinstance(e.code, int):
            return "error", e.code, {"type": "SystemExit", "message": str(e.code)}, []
        print(e.code, file=sys.stderr)
        return "error", 1, {"type": "SystemExit", "message": str(e.code)}, []
    except MemoryError:
        print("MemoryError", file=sys.stderr)
        return "memory", None, {"type": "MemoryError", "message": "the cell ran out of memory"}, []
    except BaseException as e:  # noqa: BLE001 - the user's exception, reported
        tb = e.__traceback__
        while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell"):
            tb = tb.tb_next
        text = "".join(traceback.format_exception(type(e), e, tb))
        if traceback_to_stderr:
            sys.stderr.write(text)
        return "error", 1, {"type": type(e).__name__, "message": str(e), "traceback": text}, open_figures()


def run_cell(job, g, n, res_w, workdir, places, main_key=None, stream=False):
    """In R: runs the cell (`job`, its frames.ExecJob; fd 1/2 already on the output pipes), then writes the result to
    res_w. The request's files are written and read back relative to the session's work dir `workdir` (whatever the
    cells made the current one), each in one of `places`; `main_key` marks its value's display (run_code); `stream`:
    its output goes to the runner as it comes, an exception's traceback only in its error (run_code)."""
    data = job.stdin
    if data:
        fd = os.memfd_create("stdin")
        write_all(fd, data.encode())
        os.lseek(fd, 0, os.SEEK_SET)
        os.dup2(fd, 0)
        os.close(fd)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[0])
        resource.setrlimit(resource.RLIMIT_AS, (address_space(pages, job.memory_mb), hard))
    except (OSError, ValueError):
        pass
    try:
        write_files(workdir, job.files, places)
    except (OSError, ValueError) as e:  # the cell does not run: the error is its own, the session's state unchanged
        status, code, error, display = "error", 1, {"type": type(e).__name__, "message": str(e)}, []
        print("%s: %s" % (type(e).__name__, e), file=sys.stderr)
    else:
        status, code, error, display = run_code(job.code, g, n, main_key, not stream)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    files, fetch_errors = fetch_files(workdir, job.fetch_files, places)
    try:
        result = {
            "id": job.id,
            "status": status,
            "exit_code": code,
            "error": error,
            "display": display,
            "files": files,
        }
        if fetch_errors:
            result["fetch_errors"] = fetch_errors
        body = _dumps(result)
    except (TypeError, ValueError) as e:
        body = _dumps(
            {
                "id": job.id,
                "status": "error",
                "exit_code": 1,
                "error": {"type": type(e).__name__, "message": str(e)},
                "display": [],
                "files": {},
            }
        )
    # The output is in its pipes already (flushed above): the result pipe's end tells S the cell is
    # over, and S takes what the output pipes hold without waiting for their ends (one wake-up).
    end_cell(body, res_w)


def end_cell(body, res_w):
    """In R: the cell's result `body` (its JSON) written to S, R's standard streams let go."""
    write_all(res_w, body.encode())
    os.close(res_w)
    os.dup2(DEVNULL, 0)
    os.dup2(DEVNULL, 1)
    os.dup2(DEVNULL, 2)


def refuse_cell(error, res_w):
    """In R: the answer to a cell whose frame was refused at its parse (`error`, a frames.FrameError): nothing ran, the
    session's state is as it was."""
    body = {
        "id": error.frame_id,
        "status": "infra_error",
        "exit_code": None,
        "error": {"type": "BadFrame", "message": "the session refused the cell's frame: %s" % error},
        "display": [],
        "files": {},
    }
    end_cell(_dumps(body), res_w)


WARM_FRAME = _dumps(
    {
        "op": "exec",
        "id": "",
        "code": "_ = 0",
        "stdin": "",
        "timeout_ms": 10000,
        "memory_mb": 1024,
        "files": {},
        "fetch_files": [],
        "max_output_bytes": 1 << 20,
        "isolation": "fork",
        "wait_ms": None,
        "tenant": None,
    }
)


def warm_cell():
    """In a fresh R: walks the cell path once on throwaway data, so that most of its copy-on-write
    page faults happen before the frame arrives, not after."""
    code = exec_job(_loads(WARM_FRAME)).code
    linecache.cache["<warm>"] = (len(code), None, code.splitlines(True), "<warm>")
    tree = ast.parse(code, "<warm>", "exec")
    if isinstance(tree.body[-1], ast.Expr):
        ast.Expression(tree.body[-1].value)
    exec(compile(tree, "<warm>", "exec"), {"__builtins__": __builtins__})
    del linecache.cache["<warm>"]
    resource.getrlimit(resource.RLIMIT_AS)
    _dumps({"id": "", "status": "ok", "exit_code": 0, "error": None, "display": [], "files": {}})
    sys.stdout.flush()


# ---------------- sandfleet_sandbox/session.py
# One session's processes: S holds the state and the connection, R (forked ahead of time) runs the next cell; a cell
# that ends hands the session over to R, one that times out or dies is killed and S stays the session.

import codecs
import os
import select
import signal
import time


PR_SET_PDEATHSIG = 1
# How long the next cell's process R waits for a frame before it exits (and S forks it anew
# when a frame comes): a session busy with cells keeps R ready, an idle one costs one process less.
SPARE_IDLE_S = float(os.environ.get(SANDBOX_KNOBS["session_spare_idle_s"], "10"))
_prctl = LIBC.prctl
# A streamed cell's output is sent at most this often, or once this much of it waits: a print loop makes few frames.
STREAM_FLUSH_S = 0.03
STREAM_FLUSH_BYTES = 65536


class OutputStream:
    """A streamed cell's output as S keeps it (within the cap), sent to the runner as `output` frames in the order it
    was read (`{"op": "output", "id", "stream": "stdout" | "stderr", "text"}`), coalesced: sent once its oldest byte
    waited STREAM_FLUSH_S, or once STREAM_FLUSH_BYTES wait. Each stream is decoded as UTF-8 across its chunks (a
    character split between two reads is sent whole)."""

    def __init__(self, wfile, frame_id, names):
        self.wfile, self.frame_id, self.names = wfile, frame_id, names
        self.decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in names}
        self.pending = []  # [fd, bytearray], runs of one stream in the order they were read
        self.size = 0
        self.since = None

    def take(self, fd, data):
        if not data:
            return
        if self.pending and self.pending[-1][0] == fd:
            self.pending[-1][1] += data
        else:
            self.pending.append([fd, bytearray(data)])
        self.size += len(data)
        if self.since is None:
            self.since = time.monotonic()

    def due(self):
        """Seconds until what waits is sent (0: now); None when nothing waits."""
        if self.since is None:
            return None
        if self.size >= STREAM_FLUSH_BYTES:
            return 0
        return max(0, self.since + STREAM_FLUSH_S - time.monotonic())

    def flush(self, final=False):
        """Sends what waits; `final`: the cell is over, each decoder's rest too."""
        frames = []
        for fd, data in self.pending:
            text = self.decoders[fd].decode(bytes(data))
            if text:
                frames.append(self.frame(fd, text))
        if final:
            for fd, decoder in self.decoders.items():
                text = decoder.decode(b"", True)
                if text:
                    frames.append(self.frame(fd, text))
        self.pending, self.size, self.since = [], 0, None
        if frames:
            self.wfile.write("".join(frames).encode())
            self.wfile.flush()

    def frame(self, fd, text):
        return '{"op": "output", "id": %s, "stream": "%s", "text": %s}\n' % (
            _dumps(self.frame_id),
            self.names[fd],
            _dumps(text),
        )


def drain(fds, capped, deadline, cap, last, bufs=None, cut=None, stream=None):
    """Reads fds until EOF on all or the deadline; keeps at most cap bytes of each fd in capped.
    Once `last` (the result pipe) is at EOF the cell is over: what the others hold now is read,
    and a process the cell left running with them open is not waited for. `bufs` and `cut`: what
    an earlier drain of the same fds read, to go on with. `stream` (an OutputStream): what is kept
    of the capped fds is also sent as it comes."""
    bufs = bufs if bufs is not None else {fd: bytearray() for fd in fds}
    cut = cut if cut is not None else {fd: False for fd in fds}
    open_fds = list(fds)
    done = False
    sweeps = 0
    while open_fds:
        left = 0 if done else deadline - time.monotonic()
        if left <= 0 and not done:
            return bufs, cut, True
        due = None if stream is None else stream.due()
        if due is not None and due < left:
            ready, _, _ = select.select(open_fds, [], [], due)
            if not ready:
                stream.flush()
                continue
        else:
            ready, _, _ = select.select(open_fds, [], [], left)
        if done:
            sweeps += 1
            if not ready or sweeps > 64:  # a process left behind may write for ever: take what is there
                break
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                done = done or fd == last
                continue
            if fd not in capped:
                bufs[fd] += chunk
                continue
            room = cap - len(bufs[fd])
            if room > 0:
                bufs[fd] += chunk[:room]
                if stream is not None:
                    stream.take(fd, chunk[:room])
            if len(chunk) > room:
                cut[fd] = True
        if stream is not None and stream.due() == 0:
            stream.flush()
    return bufs, cut, False


class Session:
    """The state and the connection of one session, in whichever process holds it now."""

    def __init__(self, conn, isolated, workdir, places):
        self.rfile = conn.makefile("rb")
        self.wfile = conn.makefile("wb")
        self.isolated, self.workdir, self.places = isolated, workdir, places
        self.g = {"__name__": "__main__", "__builtins__": __builtins__}
        self.n = 0
        # The code contexts beside the default one (`self.g`): each its own globals and working directory.
        self.contexts = {}

    def serve(self):
        """The session loop in S; returns never (exits when the connection or the session ends)."""
        while True:
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            res_r, res_w = os.pipe()
            ctl_r, ctl_w = os.pipe()
            go_r, go_w = os.pipe()
            me = os.getpid()
            pid = os.fork()
            if pid == 0:
                for fd in (out_r, err_r, res_r, ctl_r, go_w):
                    os.close(fd)
                self.runner(me, out_w, err_w, res_w, ctl_w, go_r)
                continue  # R took over: it is S now
            for fd in (out_w, err_w, res_w, ctl_w, go_r):
                os.close(fd)
            warm_supervisor()
            self.supervise(pid, out_r, err_r, res_r, ctl_r, go_w)

    def runner(self, parent, out_w, err_w, res_w, ctl_w, go_r):
        """R: waits for a frame, runs it; returns when it became the session."""
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(0)
        os.setpgid(0, 0)
        conn_fd = self.rfile.fileno()
        # A frame already waiting (the first cell after an idle spell): no time to warm up.
        if not select.select([conn_fd], [], [], 0)[0]:
            warm_cell()
            if not select.select([conn_fd], [], [], SPARE_IDLE_S)[0]:
                # Idle: this spare process goes, so an idle session holds only S (and its init).
                write_all(ctl_w, b"idle\n")
                os._exit(0)
        line = self.rfile.readline()
        if not line:
            os._exit(0)
        options = None
        stream = False
        try:
            frame = _loads(line)
            if type(frame) is dict and frame.get("op") == "cell":  # the cell's options, then its exec frame
                exec_line = self.rfile.readline()
                options = cell_options(frame)
                stream = options.stream
                frame = _loads(exec_line) if exec_line else None
            if type(frame) is not dict or frame.get("op") != "exec":
                os._exit(0)  # `close`: the session ends
            job = exec_job(frame)
        except ValueError as e:  # not JSON, or a FrameError: refused, answered, the session as it was
            job, refused = None, e if isinstance(e, FrameError) else FrameError("a frame that is not JSON")
        head = (
            [1000, 0, refused.frame_id, False]
            if job is None
            else [job.timeout_ms, job.max_output_bytes, job.id, stream]
        )
        write_all(ctl_w, (_dumps(head) + "\n").encode())
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.close(out_w)
        os.close(err_w)
        if job is None:
            refuse_cell(refused, res_w)
        elif options is not None:
            self.n += 1
            self.run_in_context(options, job, res_w)
        else:
            self.n += 1
            run_cell(job, self.g, self.n, res_w, self.workdir, self.places)
        go = os.read(go_r, 1)
        os.close(go_r)
        if go != b"g":
            os._exit(0)
        _prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
        os.write(ctl_w, b"k")
        os.close(ctl_w)

    def run_in_context(self, options, job, res_w):
        """Runs a cell as its options (frames.CellOptions) say: in a code context (its globals and working directory,
        made fresh the first time it is named; those in `forget` dropped first), with `env` set in the environment for
        this cell only, and its value's display marked with `main_key`."""
        for key in options.forget:
            self.contexts.pop(key, None)
        key = options.context
        if key is None:
            g, state = self.g, {}
        else:
            state = self.contexts.get(key)
            if state is None:
                g = {"__name__": "__main__", "__builtins__": __builtins__}
                state = self.contexts[key] = {"g": g, "cwd": options.cwd}
            g = state["g"]
        if state.get("cwd"):
            try:
                os.chdir(state["cwd"])
            except OSError:
                pass
        saved = {}
        for name, value in options.env.items():
            saved[name] = os.environ.get(name)
            os.environ[name] = value
        try:
            run_cell(job, g, self.n, res_w, self.workdir, self.places, options.main_key, options.stream)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            if key is not None:
                try:
                    state["cwd"] = os.getcwd()
                except OSError:
                    pass

    def supervise(self, pid, out_r, err_r, res_r, ctl_r, go_w):
        """S: waits for R to start a cell, drains it, answers; exits when R took over."""
        head = b""
        while not head.endswith(b"\n"):
            chunk = os.read(ctl_r, 4096)
            if not chunk:  # R ended without a cell: the connection closed or the session was closed
                os._exit(0)
            head += chunk
        if head == b"idle\n":
            os.waitpid(pid, 0)
            for fd in (out_r, err_r, res_r, ctl_r, go_w):
                os.close(fd)
            select.select([self.rfile.fileno()], [], [])  # the next frame (or the end) forks the next R
            return
        started = time.monotonic()
        timeout_ms, cap, frame_id, streamed = _loads(head)
        stream = OutputStream(self.wfile, frame_id, {out_r: "stdout", err_r: "stderr"}) if streamed else None
        fds, capped = [out_r, err_r, res_r], (out_r, err_r)
        bufs, cut, timed_out = drain(fds, capped, started + timeout_ms / 1000, cap, res_r, stream=stream)
        if timed_out:  # the soft stop: a handler of the cell's own may print and end; what it writes is kept
            try:
                os.killpg(pid, signal.SIGTERM)
            except OSError:
                pass
            drain(fds, capped, time.monotonic() + SOFT_STOP_S, cap, res_r, bufs, cut, stream)
        for fd in (out_r, err_r, res_r):
            os.close(fd)
        if stream is not None:  # every output frame before the result's
            stream.flush(True)
        raw = bytes(bufs[res_r]) if not timed_out else b""
        head = result_head(bufs[out_r], bufs[err_r], cut[out_r], cut[err_r], started)
        if raw.startswith(b"{") and raw.endswith(b"}"):
            self.wfile.write(result_line(head, "" if self.isolated else ', "pid": %d' % pid, raw))
            self.wfile.flush()
            os.write(go_w, b"g")
            os.read(ctl_r, 1)  # R cleared its death signal: it holds the session now
            os._exit(0)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        _, st = os.waitpid(pid, 0)
        os.close(go_w)
        os.close(ctl_r)
        status = "timeout" if timed_out else "killed"
        sig = os.WTERMSIG(st) if os.WIFSIGNALED(st) else None
        rest = {
            "id": frame_id,
            "status": status,
            "exit_code": None if sig else os.WEXITSTATUS(st),
            "display": [],
            "files": {},
            "error": {
                "type": status,
                "message": "the cell passed its timeout; the session keeps its state from before the cell"
                if timed_out
                else "the cell's process died (signal %s); the session keeps its state from before the cell" % sig,
            },
        }
        if not self.isolated:
            rest["pid"] = os.getpid()
        self.wfile.write(("%s, %s\n" % (head, _dumps(rest)[1:])).encode())
        self.wfile.flush()


def result_head(out, err, cut_out, cut_err, started):
    """The opening of a result frame: the output S read and the time the cell took."""
    return (
        '{"op": "result", "stdout": %s, "stderr": %s, "duration_ms": %s, "truncated": {"stdout": %s, "stderr": %s}'
        % (
            _dumps(out.decode("utf-8", "replace")),
            _dumps(err.decode("utf-8", "replace")),
            repr((time.monotonic() - started) * 1000),
            "true" if cut_out else "false",
            "true" if cut_err else "false",
        )
    )


def result_line(head, pid_part, raw):
    """A whole result frame: the head, then the fields of R's result object as R wrote them."""
    return ("%s%s, %s\n" % (head, pid_part, raw[1:].decode())).encode()


def warm_supervisor():
    """In S right after it forked R: walks S's answering path once on a throwaway pipe, so that
    its copy-on-write page faults come before the cell, not between cell and answer."""
    fds = []
    for data in (b"", b"", b'{"x": 1}'):
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        fds.append(r)
    a, b, r = fds
    _loads('[10000, 1048576, "", false]')
    started = time.monotonic()
    bufs, cut, _ = drain(fds, (a, b), started + 1, 1 << 20, r)
    for fd in fds:
        os.close(fd)
    raw = bytes(bufs[r])
    if raw.startswith(b"{") and raw.endswith(b"}"):
        result_line(result_head(bufs[a], bufs[b], cut[a], cut[b], started), ', "pid": %d' % 1, raw)


# ---------------- sandfleet_sandbox/agent.py
# A session's agent: its files and its processes, in the session's own namespaces (the sandbox surface a session
# offers beside its cells: what E2B's envd gives a sandbox).
#
# It speaks NDJSON with the runner over its own socket. A request is `{"id": N, "op": ...}`; a one-shot answer is
# `{"id": N, "ok": {...}}` or `{"id": N, "error": {"kind", "message"}}`, `kind` one of not_found, exists, invalid,
# denied, too_large, io. A process started (`start`) or reattached (`connect`) answers a stream of events instead:
# `{"id": N, "event": "start", "pid"}`, then `stdout` and `stderr` (`data`: base64), then `end` (`exit_code`, `exited`,
# `status`) and nothing more for N; `{"op": "detach", "stream": N}` stops a stream (the process runs on).
#
# Ops: read, write, stat, list (depth), mkdir, move, remove on files (a path relative to the session's home, or
# absolute; what changes a file must lie in one of the session's writable places); start (cmd, args, envs, cwd, stdin,
# tag), connect, ps, signal (9 or 15, to the process's group), stdin, close_stdin on processes. A process runs in a
# process group of its own, with the session's environment and its own, and the session's memory limit as its address
# space limit (plus room for the program itself).
#
# Where the session has namespaces of its own the agent is its pid 1 (host.py's init_main): it reaps every process of
# the session, and leaves, taking the namespace's processes with it, when the runner closes its socket.

import base64
import errno
import json
import os
import resource
import select
import shutil
import signal
import stat
import time


READ_MAX_BYTES = 64 << 20  # a larger file is refused (too_large), not cut
END_GRACE_S = 0.2  # after a process exits, how long its pipes may stay open (a child it left holds them) before its end
PROGRAM_ROOM_MB = 256  # a process's address space beyond the session's memory_mb: its program and libraries
SIGNALS = {9: signal.SIGKILL, 15: signal.SIGTERM}
FILE_TYPES = ((stat.S_ISREG, 'file'), (stat.S_ISDIR, 'dir'), (stat.S_ISLNK, 'symlink'))


class AgentError(Exception):
    """A request the agent refuses: `kind` says which (see the module comment)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def os_error(err, path):
    """The AgentError of an OSError about `path`."""
    kinds = {
        errno.ENOENT: 'not_found',
        errno.ENOTDIR: 'not_found',
        errno.EEXIST: 'exists',
        errno.ENOTEMPTY: 'exists',
        errno.EACCES: 'denied',
        errno.EPERM: 'denied',
        errno.EROFS: 'denied',
        errno.EISDIR: 'invalid',
        errno.EFBIG: 'too_large',
        errno.ENOSPC: 'too_large',
    }
    return AgentError(kinds.get(err.errno, 'io'), '%s: %s' % (path, err.strerror or err))


def entry_of(path):
    """What a file is, as the agent answers it (its last link not followed)."""
    st = os.lstat(path)
    kind = next((name for test, name in FILE_TYPES if test(st.st_mode)), 'other')
    entry = {
        'name': os.path.basename(path) or '/',
        'type': kind,
        'path': path,
        'size': st.st_size,
        'mode': stat.S_IMODE(st.st_mode),
        'permissions': stat.filemode(st.st_mode),
        'owner': str(st.st_uid),
        'group': str(st.st_gid),
        'mtime': st.st_mtime,
    }
    if kind == 'symlink':
        entry['symlink_target'] = os.readlink(path)
    return entry


class Proc:
    """One process the agent started: its pipes, who listens to it, how it ended."""

    def __init__(self, pid, config, out_fd, err_fd, in_fd):
        self.pid, self.config = pid, config
        self.fds = {out_fd: 'stdout', err_fd: 'stderr'}
        self.stdin, self.pending = in_fd, bytearray()
        self.listeners = set()
        self.status, self.ended_at = None, None


class Agent:
    """The agent loop of one session; see the module comment."""

    def __init__(self, conn, home, places, env, memory_mb):
        self.conn = conn
        self.buffered = b''
        self.home, self.places, self.env = home, places, env
        self.memory_mb = memory_mb
        self.procs = {}
        self.by_fd = {}
        self.gone = False

    # -- the loop

    def serve(self):
        """Answers requests until the runner closes the socket; then every process it started is killed."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        conn_fd = self.conn.fileno()
        try:
            while True:
                readable = [conn_fd, wake_r, *self.by_fd]
                writable = [p.stdin for p in self.procs.values() if p.stdin is not None and p.pending]
                ready, can_write, _ = select.select(readable, writable, [], self.wait_s())
                if wake_r in ready:
                    try:
                        while os.read(wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                self.reap()
                for fd in ready:
                    if fd in self.by_fd:
                        self.pipe_ready(fd)
                for fd in can_write:
                    self.feed(fd)
                if (conn_fd in ready and not self.requests()) or self.gone:
                    return
                self.finish()
        finally:
            for pid in list(self.procs):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass

    def wait_s(self):
        """How long select may wait: until the first exited process's pipes are given up on, or a reap's tick."""
        ended = [p.ended_at for p in self.procs.values() if p.ended_at is not None]
        if ended:
            return max(0.0, min(ended) + END_GRACE_S - time.monotonic())
        return 1.0 if self.procs else None

    def requests(self):
        """Reads what the socket holds and answers each whole request in it; False at the socket's end."""
        chunk = self.conn.recv(1 << 20)
        if not chunk:
            return False
        self.buffered += chunk
        *lines, self.buffered = self.buffered.split(b'\n')
        for line in lines:
            if line:
                self.request(line)
        return True

    def request(self, line):
        """Answers one request."""
        try:
            frame = json.loads(line)
        except ValueError:
            return
        rid = frame.get('id')
        op = frame.get('op')
        if op == 'detach':
            for p in self.procs.values():
                p.listeners.discard(frame.get('stream'))
            return
        try:
            if op in ('start', 'connect'):
                getattr(self, 'op_' + op)(rid, frame)
                return
            handler = getattr(self, 'op_' + str(op), None)
            if handler is None:
                raise AgentError('invalid', 'unknown op %r' % op)
            self.send({'id': rid, 'ok': handler(frame)})
        except AgentError as e:
            self.send({'id': rid, 'error': {'kind': e.kind, 'message': str(e)}})
        except ValueError as e:
            self.send({'id': rid, 'error': {'kind': 'invalid', 'message': str(e)}})
        except OSError as e:
            self.send({'id': rid, 'error': {'kind': 'io', 'message': str(e)}})

    def send(self, frame):
        """Sends one answer or event; once the runner is gone, nothing (the loop then ends at the socket's end)."""
        if self.gone:
            return
        try:
            self.conn.sendall((json.dumps(frame) + '\n').encode())
        except OSError:
            self.gone = True

    # -- files

    def path_of(self, frame, key='path'):
        """The absolute path a request names (relative: to the home)."""
        path = frame.get(key)
        if not isinstance(path, str) or path == '':
            return self.home
        if '\0' in path:
            raise AgentError('invalid', '%r holds a NUL byte' % path)
        return os.path.normpath(os.path.join(self.home, path))

    def writable(self, path):
        """`path` if it lies in one of the session's writable places (a link out of them counts as outside)."""
        try:
            place_of(self.home, path, self.places)
        except ValueError as e:
            raise AgentError('denied', str(e))
        return path

    def op_read(self, frame):
        path = self.path_of(frame)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            raise os_error(e, path)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise AgentError('invalid', '%s is a directory' % path)
            if not stat.S_ISREG(st.st_mode):
                raise AgentError('invalid', '%s is not a regular file' % path)
            with open(fd, 'rb', closefd=False) as f:
                data = f.read(READ_MAX_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > READ_MAX_BYTES:
            raise AgentError('too_large', '%s is larger than %d bytes' % (path, READ_MAX_BYTES))
        return {'data': base64.b64encode(data).decode()}

    def op_write(self, frame):
        path = self.writable(self.path_of(frame))
        data = base64.b64decode(frame.get('data') or '')
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'wb') as f:
                f.write(data)
            return {'entry': entry_of(path)}
        except OSError as e:
            raise os_error(e, path)

    def op_stat(self, frame):
        path = self.path_of(frame)
        try:
            return {'entry': entry_of(path)}
        except OSError as e:
            raise os_error(e, path)

    def op_list(self, frame):
        path = self.path_of(frame)
        depth = max(1, int(frame.get('depth') or 1))
        try:
            if not stat.S_ISDIR(os.stat(path).st_mode):
                raise AgentError('invalid', '%s is not a directory' % path)
            entries = []
            self.walk(path, depth, entries)
            return {'entries': entries}
        except OSError as e:
            raise os_error(e, path)

    def walk(self, path, depth, entries):
        for name in sorted(os.listdir(path)):
            child = os.path.join(path, name)
            try:
                entry = entry_of(child)
            except OSError:
                continue  # gone meanwhile
            entries.append(entry)
            if depth > 1 and entry['type'] == 'dir':
                try:
                    self.walk(child, depth - 1, entries)
                except OSError:
                    pass

    def op_mkdir(self, frame):
        path = self.writable(self.path_of(frame))
        if os.path.lexists(path):
            raise AgentError('exists', '%s already exists' % path)
        try:
            os.makedirs(path)
            return {'entry': entry_of(path)}
        except OSError as e:
            raise os_error(e, path)

    def op_move(self, frame):
        source = self.writable(self.path_of(frame, 'source'))
        destination = self.writable(self.path_of(frame, 'destination'))
        try:
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.move(source, destination)
            return {'entry': entry_of(destination)}
        except OSError as e:
            raise os_error(e, source)

    def op_remove(self, frame):
        path = self.writable(self.path_of(frame))
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            return {}
        except OSError as e:
            raise os_error(e, path)

    # -- processes

    def op_start(self, rid, frame):
        cmd = frame.get('cmd')
        args = frame.get('args') or []
        envs = frame.get('envs') or {}
        if not isinstance(cmd, str) or cmd == '' or not all(isinstance(a, str) for a in args):
            raise AgentError('invalid', 'a process needs a command (cmd) and string args')
        cwd = self.path_of(frame, 'cwd')
        if not os.path.isdir(cwd):
            raise AgentError('invalid', 'working directory %s does not exist' % cwd)
        env = dict(self.env)
        env.update({str(k): str(v) for k, v in envs.items()})
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if frame.get('stdin') else (os.open(os.devnull, os.O_RDONLY), None)
        pid = os.fork()
        if pid == 0:
            self.child(cmd, args, env, cwd, in_r, out_w, err_w)
        for fd in (out_w, err_w, in_r):
            os.close(fd)
        if in_w is not None:
            os.set_blocking(in_w, False)
        config = {'cmd': cmd, 'args': args, 'envs': envs, 'cwd': cwd}
        if isinstance(frame.get('tag'), str):
            config['tag'] = frame['tag']
        proc = Proc(pid, config, out_r, err_r, in_w)
        self.procs[pid] = proc
        self.by_fd[out_r] = self.by_fd[err_r] = proc
        proc.listeners.add(rid)
        self.send({'id': rid, 'event': 'start', 'pid': pid})

    def child(self, cmd, args, env, cwd, in_r, out_w, err_w):
        """In the forked child: its own process group, its pipes as fds 0-2, nothing else open, its limits; then the
        program. Never returns."""
        try:
            os.setpgid(0, 0)
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
            limit = (self.memory_mb + PROGRAM_ROOM_MB) << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            os.chdir(cwd)
            os.execvpe(cmd, [cmd, *args], env)
        except BaseException as e:  # noqa: BLE001 - the child never returns into the agent
            try:
                os.write(2, ('%s: %s\n' % (cmd, e)).encode())
            except OSError:
                pass
        os._exit(127)

    def op_connect(self, rid, frame):
        proc = self.proc_of(frame)
        proc.listeners.add(rid)
        self.send({'id': rid, 'event': 'start', 'pid': proc.pid})

    def proc_of(self, frame):
        pid = frame.get('pid')
        proc = self.procs.get(pid) if isinstance(pid, int) else None
        if proc is None or proc.status is not None:
            raise AgentError('not_found', 'no running process %s' % pid)
        return proc

    def op_ps(self, frame):
        return {
            'processes': [{'pid': p.pid, **p.config} for p in self.procs.values() if p.status is None],
        }

    def op_signal(self, frame):
        proc = self.proc_of(frame)
        sig = SIGNALS.get(frame.get('signal'))
        if sig is None:
            raise AgentError('invalid', 'signal %r is not one of %s' % (frame.get('signal'), sorted(SIGNALS)))
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            os.kill(proc.pid, sig)
        return {}

    def op_stdin(self, frame):
        proc = self.proc_of(frame)
        if proc.stdin is None:
            raise AgentError('invalid', 'process %d was started without stdin' % proc.pid)
        proc.pending += base64.b64decode(frame.get('data') or '')
        self.feed(proc.stdin)
        return {}

    def op_close_stdin(self, frame):
        proc = self.proc_of(frame)
        if proc.stdin is not None:
            os.close(proc.stdin)
            proc.stdin = None
        return {}

    def feed(self, fd):
        """Writes what a process's stdin may take now of what waits for it."""
        proc = next((p for p in self.procs.values() if p.stdin == fd), None)
        if proc is None or not proc.pending:
            return
        try:
            n = os.write(fd, proc.pending)
            del proc.pending[:n]
        except BlockingIOError:
            pass
        except OSError:  # the process closed its stdin
            proc.pending.clear()

    def pipe_ready(self, fd):
        proc = self.by_fd[fd]
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b''
        if not chunk:
            self.close_pipe(proc, fd)
            return
        data = base64.b64encode(chunk).decode()
        for rid in list(proc.listeners):
            self.send({'id': rid, 'event': proc.fds[fd], 'data': data})

    def close_pipe(self, proc, fd):
        del self.by_fd[fd]
        del proc.fds[fd]
        os.close(fd)

    def reap(self):
        """Reaps every exited child (as pid 1 of the session, also what is not its own) and notes how its own ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            proc = self.procs.get(pid)
            if proc is not None:
                proc.status, proc.ended_at = status, time.monotonic()

    def finish(self):
        """Ends the processes that exited and whose pipes are closed, or held open past the grace."""
        now = time.monotonic()
        for pid, proc in list(self.procs.items()):
            if proc.ended_at is None or (proc.fds and now < proc.ended_at + END_GRACE_S):
                continue
            for fd in list(proc.fds):
                self.drain(proc, fd)
            if proc.stdin is not None:
                os.close(proc.stdin)
            del self.procs[pid]
            end = {'event': 'end', **ending(proc.status)}
            for rid in proc.listeners:
                self.send({'id': rid, **end})

    def drain(self, proc, fd):
        """What a pipe holds now, sent; then it is closed."""
        try:
            os.set_blocking(fd, False)
            chunk = os.read(fd, 1 << 20)
            if chunk:
                data = base64.b64encode(chunk).decode()
                for rid in proc.listeners:
                    self.send({'id': rid, 'event': proc.fds[fd], 'data': data})
        except OSError:
            pass
        self.close_pipe(proc, fd)


def ending(status):
    """How a process ended, as its end event says it: an exit code, or -1 and the signal that killed it."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        names = {signal.SIGKILL: 'killed', signal.SIGTERM: 'terminated'}
        return {'exit_code': -1, 'exited': False, 'status': 'signal: %s' % names.get(sig, 'signal %d' % sig)}
    code = os.WEXITSTATUS(status)
    return {'exit_code': code, 'exited': True, 'status': 'exit status %d' % code}


# ---------------- sandfleet_sandbox/host.py

import ctypes
import gc
import io
import json
import os
import resource
import signal
import socket
import sys
import tempfile
import warnings


CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
PR_SET_DUMPABLE = 4
# Looked up once here, so the sessions share these function objects instead of each making its own.
_unshare, _mount = LIBC.unshare, LIBC.mount


def send(stream, frame):
    stream.write((_dumps(frame) + "\n").encode())
    stream.flush()


def unshare_session():
    """Gives this process new user, mount, pid, IPC and network namespaces; True when it could."""
    uid, gid = os.getuid(), os.getgid()
    if _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS) != 0:
        return False
    try:
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write("%d %d 1" % (uid, uid))
        with open("/proc/self/gid_map", "w") as f:
            f.write("%d %d 1" % (gid, gid))
    except OSError:
        return False
    return True


def mount(source, target, fstype, flags=0, data=None):
    if (
        _mount(
            source.encode(),
            target.encode(),
            None if fstype is None else fstype.encode(),
            flags,
            None if data is None else data.encode(),
        )
        != 0
    ):
        raise OSError(ctypes.get_errno(), "mount %s on %s" % (fstype, target))


# The dirs an isolated session gets as its own fresh tmpfs: with its work dir (in /tmp), where its
# cells may write a request's files and fetch them from. /home/user, where the sandbox has it (the process driver
# makes it), is a sandbox session's home.
PRIVATE_DIRS = ("/tmp", "/mnt", "/dev/shm", "/home/user")
SESSION_MAX_PROCS = int(os.environ.get(SANDBOX_KNOBS["session_max_procs"], "512"))


def init_main(srv, path, sockdir, ready_w, opts):
    """pid 1 of a session's namespaces: private /proc, /tmp, /mnt, /dev/shm and /home/user; then the session; then
    reaps, or is the session's agent."""
    ok = b"1"
    dirfd = os.open(sockdir, os.O_RDONLY | os.O_DIRECTORY)  # the socket's directory, also once covered
    try:
        mount("none", "/", None, MS_REC | MS_PRIVATE)
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)
        # Each at most the session's memory: the session host has no memory cgroup of its own, so a tmpfs without a
        # size would let a session's files take the host's memory.
        size = "mode=0700,size=%dm" % memory_of(opts)
        for d in PRIVATE_DIRS:
            if os.path.isdir(d):
                mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, size)
        resource.setrlimit(resource.RLIMIT_NPROC, (SESSION_MAX_PROCS, SESSION_MAX_PROCS))
    except (OSError, ValueError):
        ok = b"0"
    # Not dumpable from here on (and so neither the session nor its cells, forked from this one): a
    # cell, the same uid, can then neither ptrace nor open /proc/PID/mem of this init or of the
    # session process that holds the state and the cell's deadline. After the mounts: the uid map
    # was written while /proc/self was still this uid's.
    prctl(PR_SET_DUMPABLE, 0)
    os.write(ready_w, ok)
    os.close(ready_w)
    conn, _ = srv.accept()
    srv.close()
    agent = accept_agent(opts, dirfd)
    try:
        os.unlink(os.path.basename(path), dir_fd=dirfd)
    except OSError:
        pass
    os.close(dirfd)
    if ok == b"1" and not os.path.realpath(sockdir).startswith("/tmp/"):
        try:
            mount("tmpfs", sockdir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=4k")
        except OSError:
            pass
    # Reaped here, not by the kernel (the host ignores SIGCHLD): the session's CPU time then adds
    # up in this process's children's times, where the fleet's accounting sees it.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    home = sandbox_environ(opts, ok == b"1")
    pid = os.fork()
    if pid == 0:
        if agent is not None:
            agent.close()
        session_main(conn, ok == b"1", home)
    conn.close()
    if agent is not None:  # the agent reaps too; it leaves (and the namespace with it) when the runner closes it
        Agent(agent, home or os.getcwd(), places_of(home, ok == b"1"), dict(os.environ), memory_of(opts)).serve()
        os._exit(0)
    # Every process of the session is this one's child or is reparented to it: it ends when none is left.
    while True:
        try:
            os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue


def session_main(conn, isolated, home=None):
    prctl(PR_SET_DUMPABLE, 0)  # a session without namespaces too (see init_main)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    workdir = home or tempfile.mkdtemp(prefix="sf-session-")
    os.chdir(workdir)
    Session(conn, isolated, workdir, places_of(workdir, isolated)).serve()
    os._exit(0)


def places_of(workdir, isolated):
    """Where a session's files may be written: its work dir, and its private dirs when it has them."""
    private = [d for d in PRIVATE_DIRS if d != workdir and os.path.isdir(d)] if isolated else []
    return [workdir, *private] if workdir else private


def memory_of(opts):
    """A session's memory_mb, as the runner sends it with its open frame (every session's has it)."""
    return int(opts["memory_mb"])


def sandbox_environ(opts, isolated):
    """A sandbox session's environment (the open frame's `env`, HOME, USER) set in this process, for the session and
    the agent to inherit; answers its home: the open frame's when it is a private place here, else None (a work dir of
    its own in /tmp)."""
    home = opts.get("home")
    home = home if isolated and home in PRIVATE_DIRS and os.path.isdir(home) else None
    if opts.get("agent"):
        os.environ.update({str(k): str(v) for k, v in (opts.get("env") or {}).items()})
        os.environ["USER"] = "user"
        if home:
            os.environ["HOME"] = home
    return home


def accept_agent(opts, dirfd):
    """The agent's connection, when the session has one (the runner connects once the session is opened)."""
    srv = opts.get("agent_srv")
    if srv is None:
        return None
    conn, _ = srv.accept()
    srv.close()
    try:
        os.unlink(os.path.basename(opts["agent_path"]), dir_fd=dirfd)
    except OSError:
        pass
    return conn


def open_session(srv, path, sockdir, report_w, opts):
    """In the host's child: namespaces where possible, then the session. Reports "PID ISOLATED"."""
    os.setsid()
    if os.environ.get(SANDBOX_ENV["session_namespaces"]) == "1" and unshare_session():
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            os.close(report_w)
            init_main(srv, path, sockdir, ready_w, opts)
            os._exit(0)
        os.close(ready_w)
        ok = os.read(ready_r, 1) == b"1"
        write_all(report_w, b"%d %d" % (pid, 1 if ok else 0))
        os._exit(0)
    write_all(report_w, b"%d 0" % os.getpid())
    os.close(report_w)
    conn, _ = srv.accept()
    srv.close()
    try:
        os.unlink(path)
    except OSError:
        pass
    dirfd = os.open(sockdir, os.O_RDONLY | os.O_DIRECTORY)
    agent = accept_agent(opts, dirfd)
    os.close(dirfd)
    if agent is not None:  # a process of its own beside the session, in the session's Unix session
        sandbox_environ(opts, False)
        workdir = tempfile.mkdtemp(prefix="sf-session-")
        if os.fork() == 0:
            conn.close()
            prctl(PR_SET_DUMPABLE, 0)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            Agent(agent, workdir, [workdir], dict(os.environ), memory_of(opts)).serve()
            os._exit(0)
        agent.close()
        session_main(conn, False, workdir)
    session_main(conn, False)


def listening(path):
    """A Unix socket bound at `path`, listening for its one connection."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    return srv


def kill_session(pid, plain):
    """Kills the process holding a session; for a session without namespaces, also every process
    of its Unix session (what its cells left running), since no init takes them down with it."""
    try:
        sid = os.getsid(pid)
    except OSError:
        sid = None
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    if sid not in plain:
        return
    plain.discard(sid)
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if os.getsid(int(name)) == sid:
                    os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass


def main():
    sockdir = sys.argv[1]
    channel = os.fdopen(os.dup(1), "wb")
    frames = os.fdopen(os.dup(0), "rb")
    os.dup2(DEVNULL, 0)
    os.dup2(DEVNULL, 1)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    # matplotlib draws with Agg, keeps its font cache in the session's own /tmp, and a cell's
    # figures are shown when it ends (open_figures), so plt.show() has nothing to warn about.
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("MPLCONFIGDIR", "/tmp/.matplotlib")
    warnings.filterwarnings("ignore", message=".*(non-GUI backend|non-interactive).*", category=UserWarning)
    for mod in os.environ.get(SANDBOX_KNOBS["session_preload"], "").split(","):
        if mod:
            try:
                __import__(mod)
            except ImportError:
                pass
    # What the host imported stays shared copy-on-write: the collector never walks (and so never
    # dirties) those objects in a session.
    gc.collect()
    gc.freeze()
    send(channel, {"op": "ready", "pid": os.getpid()})
    plain = set()  # the Unix session ids (their first process's pid) of the sessions without namespaces
    for line in frames:
        frame = json.loads(line)
        if frame.get("op") == "shutdown":
            return
        if frame.get("op") == "kill":
            pid = int(frame.get("pid") or 0)
            if pid > 1 and pid != os.getpid():
                kill_session(pid, plain)
            continue
        if frame.get("op") == "open":
            path = os.path.join(sockdir, frame["sid"] + ".sock")
            srv = listening(path)
            opts = {k: frame.get(k) for k in ("agent", "env", "home", "memory_mb")}
            if frame.get("agent"):
                opts["agent_path"] = os.path.join(sockdir, frame["sid"] + ".agent.sock")
                opts["agent_srv"] = listening(opts["agent_path"])
            report_r, report_w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(report_r)
                frames.close()
                channel.close()
                open_session(srv, path, sockdir, report_w, opts)
                os._exit(0)
            os.close(report_w)
            srv.close()
            if opts.get("agent_srv") is not None:
                opts["agent_srv"].close()
            report = b""
            while True:
                chunk = os.read(report_r, 64)
                if not chunk:
                    break
                report += chunk
            os.close(report_r)
            try:
                holder, isolated = (int(x) for x in report.split())
            except ValueError:
                send(channel, {"op": "opened", "sid": frame["sid"], "error": "the session process died while opening"})
                continue
            if isolated != 1:
                plain.add(pid)
            opened = {"op": "opened", "sid": frame["sid"], "pid": holder, "socket": path, "isolated": isolated == 1}
            if opts.get("agent_path"):
                opened["agent_socket"] = opts["agent_path"]
            send(channel, opened)


if __name__ == '__main__':
    main()
