"""The runner's frames that both programs take (the executor's `exec` jobs, the session host's cells and their
`cell` options), parsed once where they come in: each kind a frozen type, its fields as the runner resolved them; and
the readers of a frame's fields that every parser uses (the judge's, judge_frames.py, the executor's alone).

The runner sends every field of a job, its defaults applied once, on its side (resolveExecRequest and the runner's
settings; services/runner/src/kits/executor/executor-channel.ts writes the frames): nothing here defaults a field, and
nothing after the parse reads a frame's dict. A frame that is not as docs/executor-protocol.md says is refused here
(`FrameError`, naming the field): its program answers it, never runs it.

A new kind of job is one more frozen type and its parser (here when both programs take it, else in a module of the
program that does), its parser in the executor's table of ops (runner_channel.PARSERS), and its handler where the
program dispatches (Controller.handlers in the executor).
"""
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
