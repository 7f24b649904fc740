"""One judge in the controller (a `judge` frame, a JudgeJob), from its frame to its result: the program compiled
once, then run on each test in a fresh process, each run a step of its own (a JudgeStep: its tier or its reuse
process, limits, deadline, capture, sweep and clean-up, on the path an `exec` job takes: placement.py, job_run.py), each
answered as it ends with a `tested` frame; a checker, when the judge has one, run the same way after each test whose
program is gone. What the runner compares, it compares outside: the expected outputs never come here (a checker's
answers come only with a checker, each written for its run alone, after the program's run). The job process's end of
a step is judge_job_process.py.

The executor knows nothing of languages: the runner sends the compile step's argv and the binary's run argv; Python
alone has a path of its own (the code compiled to bytecode once, here, and each test a fork of its warm zygote, or a
run in its reuse process at `reuse`).

Frames (docs/executor-protocol.md, "Judging"): `compiled` for each compile step that ran (`binary`, base64, with a
compiler's output that the runner may cache), `tested` for each test that ran, then the job's `result` (its status
`ok` when the judge ran to its end or its stop; a fleet status when it could not; `retire` as any job's). The runner's
word on the judge (`judge_ack`, `judge_stop`) is read between two tests, from the channel's `words`.
"""
import base64
import time
import traceback
import types

from .frames import FrameError
from .judge_frames import JudgeStep, JudgeStop
from .job_process import MAIN_FILE
from .judge_job_process import ARGV, CALL, EXEC
from .results import failed, refused

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
