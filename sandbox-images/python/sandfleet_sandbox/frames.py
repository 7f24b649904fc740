"""The runner's frames, parsed once where they come in: each kind a frozen type, its fields as the runner resolved them.

The runner sends every field of a job, its defaults applied once, on its side (resolveExecRequest and the runner's
settings; services/runner/src/kits/executor/executor-channel.ts writes the frames): nothing here defaults a field, and
nothing after the parse reads a frame's dict. A frame that is not as docs/executor-protocol.md says is refused here
(`FrameError`, naming the field): its program answers it, never runs it.

A new kind of job is one more frozen type here, its parser in PARSERS, and its handler where the program dispatches
(Controller.handlers in the executor). A judge (`judge`) is one: its program, its checker and its tests each a frozen
type of their own; the runner's word on the judge that runs (`judge_ack`, `judge_stop`) are frames of their own types,
taken by that judge rather than queued (WORDS). A judge's runs are jobs made here too, not parsed: `JudgeStep`.
"""
import base64
import binascii
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


class CellOptions(collections.namedtuple('CellOptions', ('context', 'cwd', 'forget', 'env', 'main_key'))):
    """A `cell` frame, which a session's runner sends just before a cell's `exec` (a sandbox's run): the code context
    it runs in (`context`: a key of the session's own, its globals made fresh the first time; None: the session's
    own), `cwd` (a new context's working directory, or None), `forget` (context keys dropped first, a tuple), `env`
    (set for this cell only, a read-only mapping) and `main_key` (the display key that marks its value's display, or
    None)."""

    __slots__ = ()


class Shutdown(collections.namedtuple('Shutdown', ())):
    """A `shutdown` frame: kill every job, exit."""

    __slots__ = ()


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


ISOLATION_LEVELS = ('fork', 'reuse')
RUNTIMES = ('python', 'binary')


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


def texts_of(frame, name):
    """A field that is a list of strings, as a tuple."""
    value = field(frame, name)
    if type(value) is not list or not all(type(v) is str for v in value):
        raise FrameError('%s is not a list of strings' % name, frame_id(frame))
    return tuple(value)


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
    return CellOptions(
        optional_text(frame, 'context'),
        optional_text(frame, 'cwd'),
        tuple(forget),
        types.MappingProxyType(env),
        optional_text(frame, 'main_key'),
    )


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
