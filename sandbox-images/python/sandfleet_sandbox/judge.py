"""A judge in the sandbox (the `judge` frame): the program compiled once, then run on each test in a fresh process, each
run a job of the controller's own (its tier or its reuse process, limits, deadline, capture, sweep and clean-up, as an
`exec` job's), each answered as it ends with a `tested` frame; a checker, when the judge has one, run the same way after
each test whose program is gone. What the runner compares, it compares outside: the expected outputs never come here
(a checker's answers come only with a checker, each written for its run alone, after the program's run).

The executor knows nothing of languages: the runner sends the compile step's argv and the binary's run argv; Python
alone has a path of its own (the code compiled to bytecode once, here, and each test a fork of its warm zygote, or a
run in its reuse process at `reuse`).

Frames (docs/executor-protocol.md, "Judging"): `compiled` for each compile step that ran (`binary`, base64, with a
compiler's output that the runner may cache), `tested` for each test that ran, then the job's `result` (its status
`ok` when the judge ran to its end or its stop; a fleet status when it could not; `retire` as any job's).
"""
import base64
import time
import traceback

from .job import MAIN_FILE
from .judge_job import JUDGE_KINDS
from .results import failed

# What a test's result frame is sent with, of the run's result: the rest (files, tier) stays here.
TESTED_FIELDS = ('status', 'exit_code', 'stdout', 'stderr', 'duration_ms', 'truncated', 'error', 'cpu_ms')
# The kinds of job of a judge's runs (judge_job.py, in the job process).
EXEC, CALL, ARGV = JUDGE_KINDS
# Results that mean the judge cannot go on here: the fleet's (another sandbox may judge it).
FLEET = ('infra_error', 'queue_timeout')


def judge(ctl, frame):
    """Judges `frame` on controller `ctl`: its result frame, once every test that runs has been answered. A frame this
    code cannot read (a runner of another version) is answered infra_error, and the sandbox retires."""
    ctl.judge_control.clear()  # what came after its judge's end is no one's
    try:
        return Judge(ctl, frame).run()
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        return failed(
            frame, 'infra_error', 'JudgeFrame', 'the executor could not read the judge frame: %r' % e, 'other'
        )


class Judge:
    """One judge frame on the controller: its programs made ready, its tests run, what it answers."""

    def __init__(self, ctl, frame):
        self.ctl, self.frame, self.id = ctl, frame, frame.get('id')
        self.t0 = time.perf_counter()
        wait = frame.get('wait_ms')
        self.wait_until = None if not isinstance(wait, (int, float)) else self.t0 + wait / 1000
        self.retire = None  # why the sandbox retires after a run (no more runs here), or None
        self.cpu_ms = 0.0
        # The runner's word: its stop; the tests it found passed (`acked`: the highest index, in order). With an
        # `ack_window` of W, test i starts only once tests up to i - W are acked: the runner compares a test while the
        # next runs, and a failing test costs at most W - 1 more (0: no acks, the runner only stops).
        self.stop, self.acked, self.window = False, -1, int(frame.get('ack_window') or 0)

    def run(self):
        frame = self.frame
        program = self.ready('program', frame['program'])
        if not isinstance(program, tuple):
            return self.end(program)
        checker = None
        if frame.get('checker') is not None:
            checker = self.ready('checker', frame['checker'])
            if not isinstance(checker, tuple):
                return self.end(checker)
        answers = frame.get('answers') or []
        stop_on_failure = frame.get('stop_on_failure') is True
        for index, test in enumerate(frame.get('tests') or []):
            if self.retire is not None or self.ctl.closing or not self.may_start(index):
                break
            result = self.run_one(self.test_job(program, test, checker is not None))
            if result['status'] in FLEET:
                return self.end(result)
            tested = {'op': 'tested', 'id': self.id, 'index': index}
            tested.update((k, result.get(k)) for k in TESTED_FIELDS)
            for key in ('returned', 'returned_error'):
                if key in result:
                    tested[key] = result[key]
            passed = result['status'] == 'ok' and not result['truncated']['stdout']
            if checker is not None and passed and self.retire is None:
                checked = self.run_one(self.checker_job(checker, test, result['stdout'], answers[index]))
                if checked['status'] in FLEET:
                    return self.end(checked)
                tested['checker'] = {k: checked.get(k) for k in ('status', 'exit_code', 'stdout', 'stderr', 'error')}
                passed = checked['status'] == 'ok'
            self.ctl.send(tested)
            if stop_on_failure and not passed:
                break  # what the runner would stop at (a wrong output it compares itself: it asks for the stop)
        return self.end(None)

    def heard(self):
        """Takes the runner's frames of this judge that came (its acks, its stop)."""
        for frame in self.ctl.judge_control:
            if frame.get('id') != self.id:
                continue
            if frame.get('op') == 'judge_stop':
                self.stop = True
            elif isinstance(frame.get('index'), int):
                self.acked = max(self.acked, frame['index'])
        self.ctl.judge_control.clear()

    def may_start(self, index):
        """Whether test `index` may run: the runner has not stopped the judge, and (with a window) has found every
        test up to index - window passed; waits for its word as long as it takes (the runner's hard deadline bounds
        the judge's every step)."""
        self.ctl.pump(0)
        self.heard()
        while not self.stop and not self.ctl.closing and index - self.window > self.acked and self.window > 0:
            self.ctl.pump(-1)
            self.heard()
        return not self.stop

    def ready(self, step, spec):
        """Program `spec` made ready to run: ('python', code object) or ('binary', bytes); or, when it is not, the
        result that ends the judge (None: a failed compile, already answered with its `compiled` frame)."""
        if spec['runtime'] == 'python':
            return self.compile_python(step, spec)
        if spec.get('binary') is not None:  # the runner's compile cache: compiled before, by the same compiler
            return 'binary', base64.b64decode(spec['binary'])
        output = spec['output']
        result = self.run_one(
            self.job(
                timeout_ms=self.frame.get('compile_timeout_ms'),
                memory_mb=self.frame.get('compile_memory_mb'),
                files={spec['source']: base64.b64encode(spec['code'].encode()).decode()},
                fetch_files=[output],
                kind=(EXEC, {'argv': spec['compile']}),
            )
        )
        if result['status'] in FLEET:
            return result
        compiled = {'op': 'compiled', 'id': self.id, 'step': step}
        compiled.update((k, result.get(k)) for k in TESTED_FIELDS)
        binary = result['files'].get(output) if result['status'] == 'ok' else None
        if result['status'] == 'ok' and binary is None:
            why = (result.get('fetch_errors') or {}).get(output, 'not written')
            compiled.update(
                status='error', stderr=result['stderr'] + '\nthe compiler\'s output %s: %s\n' % (output, why)
            )
        if binary is not None:
            compiled['binary'] = binary
        self.ctl.send(compiled)
        return ('binary', base64.b64decode(binary)) if binary is not None else None

    def compile_python(self, step, spec):
        """Python's compile step: to bytecode, here, once for every test (as an `exec` job's code is compiled here)."""
        t0, c0 = time.perf_counter(), time.thread_time()
        compiled = {'op': 'compiled', 'id': self.id, 'step': step, 'exit_code': 0, 'stdout': '', 'stderr': ''}
        try:
            code = compile(spec['code'], MAIN_FILE, 'exec', dont_inherit=True)
        except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError) as e:
            code = None
            compiled.update(status='error', exit_code=1, stderr=''.join(traceback.format_exception_only(type(e), e)))
        else:
            compiled['status'] = 'ok'
        compiled.update(
            duration_ms=(time.perf_counter() - t0) * 1000,
            cpu_ms=round((time.thread_time() - c0) * 1000, 3),
            truncated={'stdout': False, 'stderr': False},
            error=None,
        )
        self.ctl.send(compiled)
        return None if code is None else ('python', code)

    def job(self, **fields):
        """A run of this judge as the controller runs an `exec` job: its id, tenant, output cap, what is left of its
        wait for a tier."""
        job = {
            'id': self.id,
            'tenant': self.frame.get('tenant'),
            'code': '',
            'stdin': '',
            'files': {},
            'fetch_files': [],
            'isolation': 'fork',
            'max_output_bytes': self.frame.get('max_output_bytes'),
        }
        if self.wait_until is not None:
            job['wait_ms'] = max(0, int((self.wait_until - time.perf_counter()) * 1000))
        job.update(fields)
        return job

    def test_job(self, program, test, checked):
        """The run of the program on one test: Python's code object (its call, for a call test), or the binary."""
        runtime, what = program
        limits = {'timeout_ms': self.frame.get('timeout_ms'), 'memory_mb': self.frame.get('memory_mb')}
        stdin = test.get('stdin') or ''
        if runtime == 'binary':
            run = self.frame['program'].get('run') or ['./main']
            return self.job(stdin=stdin, kind=(EXEC, {'argv': run, 'binary': what}), **limits)
        call = test.get('call')
        return self.job(
            code=self.frame['program']['code'],
            compiled=what,
            stdin=stdin,
            # a checker's answers are written in the work dir beside the reuse process: its program runs forked
            isolation='fork' if checked else self.frame.get('isolation') or 'fork',
            kind=None if call is None else (CALL, (call[0], call[1])),
            **limits,
        )

    def checker_job(self, checker, test, output, answer):
        """The checker's run on one test, `checker INPUT OUTPUT ANSWER`: the three files written for it alone, after the
        program's run was swept."""
        files = {
            name: base64.b64encode(text.encode()).decode()
            for name, text in (('input', test.get('stdin') or ''), ('output', output), ('answer', answer))
        }
        limits = {'timeout_ms': self.frame.get('checker_timeout_ms'), 'memory_mb': self.frame.get('memory_mb')}
        runtime, what = checker
        if runtime == 'binary':
            argv = [*(self.frame['checker'].get('run') or ['./checker']), 'input', 'output', 'answer']
            return self.job(files=files, kind=(EXEC, {'argv': argv, 'binary': what}), **limits)
        return self.job(
            code=self.frame['checker']['code'],
            compiled=what,
            files=files,
            kind=(ARGV, ['input', 'output', 'answer']),
            **limits,
        )

    def run_one(self, job):
        """One run, as the controller runs an `exec` job (and, after a reuse process's run, its verdict awaited and the
        dirs cleaned, as between two jobs); its result frame."""
        result = self.ctl.run(job)
        if self.ctl.after_reuse is not None:
            self.ctl.clean_after_reuse()
        self.ctl.settle()
        if result.get('retire'):
            self.retire = result.get('retire_reason') or 'other'
        if isinstance(result.get('cpu_ms'), (int, float)):
            self.cpu_ms += result['cpu_ms']
        return result

    def end(self, fault):
        """The judge's result frame: `ok` when it ran to its end or its stop; else the fault that ended it (a fleet
        status: its tier still warming, the sandbox tampered with)."""
        if fault is not None:
            result = dict(fault)
        else:
            result = failed(self.frame, 'ok', '', '')
            result['error'] = None
        result.update(op='result', id=self.id, duration_ms=(time.perf_counter() - self.t0) * 1000)
        result['cpu_ms'] = round(self.cpu_ms, 3)
        if self.retire is not None:
            result.update(retire=True, retire_reason=result.get('retire_reason') or self.retire)
        self.ctl.judge_control.clear()
        return result
