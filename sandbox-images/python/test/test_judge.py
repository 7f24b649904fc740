"""The executor's judge frames (judge_run.py, judge_job_process.py) on the built executor.py, unsandboxed: a program
compiled once and run on each test in a fresh process, its frames in order, Python's call tests, a checker's run, the
runner's stop and acks; a judge frame, or a word on it, that does not parse."""
import base64
import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPP = ['g++', '-std=c++17', '-O2', '-pipe', '-o', 'main', 'main.cpp']
# A judge frame's fields as the runner resolves them (judge-frames.ts), for what a test leaves out.
JUDGE_RESOLVED = {
    'op': 'judge',
    'id': 'j',
    'checker': None,
    'answers': None,
    'timeout_ms': 5000,
    'memory_mb': 256,
    'compile_timeout_ms': 60000,
    'compile_memory_mb': 2048,
    'checker_timeout_ms': 5000,
    'max_output_bytes': 65536,
    'stop_on_failure': False,
    'ack_window': 0,
    'isolation': 'fork',
    'tenant': None,
    'wait_ms': None,
}
needs_gpp = pytest.mark.skipif(shutil.which('g++') is None, reason='no g++ on this host')


class Executor:
    def __init__(self, tmp):
        env = {'PATH': '/usr/bin:/bin', 'SANDFLEET_WORKDIR': str(tmp / 'work'), 'HOME': str(tmp)}
        self.p = subprocess.Popen(
            ['/usr/bin/python3', '-I', os.path.join(HERE, 'executor.py')],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.read()['op'] == 'ready'

    def read(self):
        return json.loads(self.p.stdout.readline())

    def read_judges(self):
        """The next frame about a judge (`compiled`, `tested`, `result`): the executor's others (`tier`, `log`,
        `retired`, `waiting`, `started`) come when they come."""
        while True:
            f = self.read()
            if f['op'] in ('compiled', 'tested', 'result'):
                return f

    def send(self, frame):
        self.p.stdin.write((json.dumps(frame) + '\n').encode())
        self.p.stdin.flush()

    def judge(self, frame, stop_after=None):
        """Sends a judge frame; its frames until its result: (compiled frames, tested frames, result)."""
        self.send(judge_frame(**frame))
        compiled, tested = [], []
        while True:
            f = self.read()
            if f['op'] == 'compiled':
                compiled.append(f)
            elif f['op'] == 'tested':
                tested.append(f)
                if stop_after is not None and f['index'] == stop_after:
                    self.send({'op': 'judge_stop', 'id': 'j'})
            elif f['op'] == 'result':
                return compiled, tested, f

    def close(self):
        self.send({'op': 'shutdown'})
        try:
            self.p.wait(timeout=30)
        finally:
            if self.p.poll() is None:
                self.p.kill()


@pytest.fixture
def executor(tmp_path):
    e = Executor(tmp_path)
    yield e
    e.close()


def judge_frame(**fields):
    """A judge frame of every field: `fields` over JUDGE_RESOLVED, each test's `call` null unless it has one."""
    tests = [{'call': None, **t} for t in fields.pop('tests')]
    return {**JUDGE_RESOLVED, **fields, 'tests': tests}


def python(code):
    return {
        'runtime': 'python',
        'source': 'main.py',
        'code': code,
        'compile': None,
        'output': None,
        'run': None,
        'binary': None,
    }


def cpp(code):
    return {
        'runtime': 'binary',
        'source': 'main.cpp',
        'code': code,
        'compile': CPP,
        'output': 'main',
        'run': ['./main'],
        'binary': None,
    }


def test_python_tests_each_run_forked_with_its_stdin_after_one_compile(executor):
    code = 'import os\nprint(int(input()) * 2, os.getpid())\n'
    compiled, tested, result = executor.judge(
        {'program': python(code), 'tests': [{'stdin': '%d\n' % i} for i in range(4)], 'isolation': 'fork'}
    )
    assert [c['status'] for c in compiled] == ['ok']
    assert [t['index'] for t in tested] == [0, 1, 2, 3]
    outs = [t['stdout'].split() for t in tested]
    assert [o[0] for o in outs] == ['0', '2', '4', '6']
    assert len({o[1] for o in outs}) == 4, 'a fresh process a test'
    assert all(t['status'] == 'ok' and t['exit_code'] == 0 for t in tested)
    assert result['op'] == 'result' and result['status'] == 'ok' and not result['retire']


def test_a_python_syntax_error_is_the_compile_steps_and_no_test_runs(executor):
    compiled, tested, result = executor.judge({'program': python('def f(:\n'), 'tests': [{'stdin': ''}]})
    assert compiled[0]['status'] == 'error' and 'SyntaxError' in compiled[0]['stderr']
    assert tested == [] and result['status'] == 'ok'


def test_call_tests_return_json_and_a_failing_test_stops_the_judge_when_asked(executor):
    code = 'class Solution:\n    def twoSum(self, a, t):\n        return (a.index(t - a[-1]), len(a) - 1)\n'
    tests = [
        {'stdin': '', 'call': ['twoSum', json.dumps([[2, 7, 11, 15], 17])]},
        {'stdin': '', 'call': ['twoSum', json.dumps([[1], 'x'])]},
        {'stdin': '', 'call': ['twoSum', json.dumps([[3, 3], 6])]},
    ]
    _, tested, result = executor.judge({'program': python(code), 'tests': tests, 'stop_on_failure': True})
    assert json.loads(tested[0]['returned']) == [0, 3]
    assert tested[1]['status'] == 'error' and tested[1]['error']['type'] == 'TypeError'
    assert len(tested) == 2, 'the executor stops at a run that failed'
    assert result['status'] == 'ok'


def test_a_call_whose_value_is_no_json_says_so(executor):
    _, tested, _ = executor.judge(
        {'program': python('def f():\n    return {1, 2}\n'), 'tests': [{'stdin': '', 'call': ['f', '[]']}]}
    )
    assert tested[0]['status'] == 'ok' and 'returned' not in tested[0]
    assert 'not a JSON value' in tested[0]['returned_error']


@needs_gpp
def test_cpp_compiled_once_its_binary_sent_back_and_each_test_an_exec(executor):
    code = '#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";return a<0;}\n'
    program = cpp(code)
    compiled, tested, result = executor.judge({'program': program, 'tests': [{'stdin': '1 2'}, {'stdin': '-5 2'}]})
    assert compiled[0]['status'] == 'ok', compiled[0]['stderr']
    binary = base64.b64decode(compiled[0]['binary'])
    assert binary[:4] == b'\x7fELF'
    assert [t['stdout'] for t in tested] == ['3\n', '-3\n']
    assert [t['exit_code'] for t in tested] == [0, 1]
    # the runner's cache: the binary given back, no compile
    program['binary'] = compiled[0]['binary']
    compiled, tested, _ = executor.judge({'program': program, 'tests': [{'stdin': '20 22'}]})
    assert compiled == [] and tested[0]['stdout'] == '42\n'


@needs_gpp
def test_a_compile_error_is_answered_with_the_compilers_message(executor):
    program = cpp('int main() { object i = ?; }\n')
    compiled, tested, result = executor.judge({'program': program, 'tests': [{'stdin': ''}]})
    assert compiled[0]['status'] == 'error' and compiled[0]['exit_code'] != 0
    assert 'object' in compiled[0]['stderr'] and 'binary' not in compiled[0]
    assert tested == [] and result['status'] == 'ok'


@needs_gpp
def test_the_binary_cannot_be_written_by_its_test(executor):
    code = (
        '#include <cstdio>\nint main(){FILE*f=fopen("/proc/self/exe","r+b");'
        'std::printf("%s\\n", f ? "writable" : "sealed");return 0;}\n'
    )
    program = cpp(code)
    _, tested, _ = executor.judge({'program': program, 'tests': [{'stdin': ''}]})
    assert tested[0]['stdout'] == 'sealed\n'


def test_a_checker_runs_after_each_test_with_input_output_and_answer(executor):
    checker = python(
        'import sys\nout, ans = open(sys.argv[2]).read().split(), open(sys.argv[3]).read().split()\n'
        'sys.exit(0 if sorted(out) == sorted(ans) else 1)\n'
    )
    _, tested, _ = executor.judge(
        {
            'program': python('print(*reversed(input().split()))'),
            'checker': checker,
            'answers': ['1 2 3\n', '9\n'],
            'tests': [{'stdin': '1 2 3'}, {'stdin': '8'}],
        }
    )
    assert [t['checker']['exit_code'] for t in tested] == [0, 1]


def test_the_runners_stop_ends_the_judge_before_the_next_test(executor):
    tests = [{'stdin': 'import time; time.sleep(0.2)'} for _ in range(20)]
    _, tested, result = executor.judge({'program': python('exec(input())'), 'tests': tests}, stop_after=1)
    assert 2 <= len(tested) < 20 and result['status'] == 'ok'


def test_with_a_window_a_test_waits_for_the_runners_word_on_the_one_before_the_last(executor):
    executor.send(
        judge_frame(program=python('print(input())'), tests=[{'stdin': str(i)} for i in range(6)], ack_window=2)
    )
    seen = []
    while len(seen) < 2:
        f = executor.read_judges()
        if f['op'] == 'tested':
            seen.append(f['index'])
    assert seen == [0, 1], 'two tests run before any ack'
    executor.send({'op': 'judge_ack', 'id': 'j', 'index': 0})
    assert executor.read_judges()['index'] == 2, 'the ack of test 0 lets test 2 run'
    executor.send({'op': 'judge_stop', 'id': 'j'})
    rest = []
    while True:
        f = executor.read_judges()
        if f['op'] == 'result':
            break
        rest.append(f['op'])
    assert rest == [] and f['status'] == 'ok', 'the stop ends it: no test past the window'


def test_a_test_past_its_deadline_is_stopped_and_the_next_runs(executor):
    _, tested, _ = executor.judge(
        {
            'program': python('import time\nif input() == "slow": time.sleep(60)\nprint("done")'),
            'tests': [{'stdin': 'slow'}, {'stdin': 'fast'}],
            'timeout_ms': 300,
        }
    )
    assert tested[0]['status'] == 'timeout'
    assert tested[1]['status'] == 'ok' and tested[1]['stdout'] == 'done\n'


def read_until_result(executor):
    """The frames the executor sends until a result: (their ops, the result)."""
    ops = []
    while True:
        f = executor.read_judges()
        if f['op'] == 'result':
            return ops, f
        ops.append(f['op'])


def test_a_judge_frame_without_a_field_is_refused_naming_it_and_nothing_runs(executor):
    frame = judge_frame(program=python('print(1)'), tests=[{'stdin': ''}])
    del frame['ack_window']
    executor.send(frame)
    ops, result = read_until_result(executor)
    assert ops == [] and result['id'] == 'j' and result['status'] == 'infra_error'
    assert result['error']['type'] == 'BadFrame' and 'ack_window' in result['error']['message']
    _, tested, result = executor.judge({'program': python('print(2)'), 'tests': [{'stdin': ''}]})
    assert tested[0]['stdout'] == '2\n' and result['status'] == 'ok', 'the executor goes on with the next frame'


def test_a_word_on_the_judge_that_does_not_parse_ends_it_as_the_runners_fault(executor):
    executor.send(
        judge_frame(program=python('print(input())'), tests=[{'stdin': str(i)} for i in range(4)], ack_window=1)
    )
    assert executor.read_judges()['op'] == 'compiled'
    assert executor.read_judges()['index'] == 0
    executor.send({'op': 'judge_ack', 'id': 'j', 'index': '0'})
    ops, result = read_until_result(executor)
    assert ops == [] and result['status'] == 'infra_error'
    assert result['error']['type'] == 'BadFrame' and 'index' in result['error']['message']
    _, tested, result = executor.judge({'program': python('print(3)'), 'tests': [{'stdin': ''}]})
    assert tested[0]['stdout'] == '3\n' and result['status'] == 'ok'


def test_words_of_a_judge_already_answered_are_no_ones(executor):
    executor.send(
        judge_frame(program=python('print(input())'), tests=[{'stdin': str(i)} for i in range(3)], ack_window=1)
    )
    assert executor.read_judges()['op'] == 'compiled'
    assert executor.read_judges()['index'] == 0
    executor.send({'op': 'judge_stop', 'id': 'an earlier judge'})
    executor.send({'op': 'judge_ack', 'id': 'an earlier judge', 'index': 9})
    executor.send({'op': 'judge_ack', 'id': 'j', 'index': 0})
    assert executor.read_judges()['index'] == 1, 'the ack of test 0 lets test 1 run; the other words change nothing'
    executor.send({'op': 'judge_ack', 'id': 'j', 'index': 1})
    assert executor.read_judges()['index'] == 2
    ops, result = read_until_result(executor)
    assert ops == [] and result['status'] == 'ok'
