"""A judge's frames, parsed once where they come in (the executor's alone: the session host never judges): `judge`
(its program, its checker and its tests each a frozen type of their own), and the runner's word on the judge that runs
(`judge_ack`, `judge_stop`), taken by that judge rather than queued (runner_channel.WORDS). A judge's runs are jobs
made here too, not parsed: `JudgeStep`. Fields are read as frames.py reads them, and refused as it refuses them.
"""
import base64
import binascii
import collections

from .frames import ExecJob, FrameError, count_of, field, frame_id, isolation_of, tenant_of, text_of, wait_of


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
