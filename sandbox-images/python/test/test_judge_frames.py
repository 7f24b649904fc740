"""judge_frames: a judge's frames (`judge`, `judge_ack`, `judge_stop`) parsed once into their frozen types, every field
as the protocol says, or refused naming the field; the runner's word on a judge kept apart from jobs."""
import pytest

from sandfleet_sandbox.frames import FrameError
from sandfleet_sandbox.judge_frames import JudgeAck, JudgeCall, JudgeJob, JudgeProgram, JudgeStop, JudgeTest
from sandfleet_sandbox.runner_channel import WORD_OPS, WORDS, parse_frame


def python_program(code='print(1)'):
    return {
        'runtime': 'python',
        'source': 'main.py',
        'code': code,
        'compile': None,
        'output': None,
        'run': None,
        'binary': None,
    }


def binary_program(**fields):
    return {
        'runtime': 'binary',
        'source': 'main.cpp',
        'code': 'int main(){}',
        'compile': ['g++', 'main.cpp'],
        'output': 'main',
        'run': ['./main'],
        'binary': None,
        **fields,
    }


def judge_frame(**fields):
    """A `judge` frame of every field, as the runner writes it (judge-frames.ts): `fields` over these."""
    return {
        'op': 'judge',
        'id': 'j',
        'program': python_program(),
        'checker': None,
        'answers': None,
        'tests': [{'stdin': '1\n', 'call': None}, {'stdin': '', 'call': ['f', '[1, 2]']}],
        'timeout_ms': 1000,
        'memory_mb': 256,
        'compile_timeout_ms': 10000,
        'compile_memory_mb': 2048,
        'checker_timeout_ms': 2000,
        'max_output_bytes': 4096,
        'stop_on_failure': True,
        'ack_window': 2,
        'isolation': 'reuse',
        'tenant': None,
        'wait_ms': 100,
        **fields,
    }


def test_a_judge_frame_becomes_a_frozen_judge_job_its_parts_typed_too():
    job = parse_frame(judge_frame())
    assert isinstance(job, JudgeJob)
    assert set(JudgeJob._fields) == set(judge_frame()) - {'op'}, 'every field of the frame, and only those'
    assert job.program == JudgeProgram('python', 'main.py', 'print(1)', None, None, None, None)
    assert job.tests == (JudgeTest('1\n', None), JudgeTest('', JudgeCall('f', '[1, 2]')))
    assert (job.timeout_ms, job.compile_timeout_ms, job.checker_timeout_ms, job.ack_window) == (1000, 10000, 2000, 2)
    assert (job.stop_on_failure, job.isolation, job.tenant, job.wait_ms, job.checker, job.answers) == (
        True,
        'reuse',
        None,
        100,
        None,
        None,
    )
    with pytest.raises(AttributeError):
        job.tests = ()
    with pytest.raises(AttributeError):
        job.program.code = 'x'


def test_a_binary_program_its_argv_as_tuples_its_cached_binary_decoded():
    job = parse_frame(
        judge_frame(
            program=binary_program(binary='f0VMRg=='),
            tests=[{'stdin': '', 'call': None}],
            checker=python_program('import sys'),
            answers=['3\n'],
        )
    )
    assert job.program.compile == ('g++', 'main.cpp') and job.program.run == ('./main',)
    assert job.program.binary == b'\x7fELF'
    assert job.checker.runtime == 'python' and job.answers == ('3\n',)


def test_every_field_of_a_judge_frame_and_of_its_parts_is_required():
    for name in set(judge_frame()) - {'op'}:
        frame = judge_frame()
        del frame[name]
        with pytest.raises(FrameError, match='no %s' % name) as refused:
            parse_frame(frame)
        assert refused.value.frame_id == (None if name == 'id' else 'j')
        assert refused.value.op == 'judge'
    for name in python_program():
        program = python_program()
        del program[name]
        with pytest.raises(FrameError, match='no program.%s' % name):
            parse_frame(judge_frame(program=program))
    for name in ('stdin', 'call'):
        test = {'stdin': '', 'call': None}
        del test[name]
        with pytest.raises(FrameError, match=r'no tests\[0\].%s' % name):
            parse_frame(judge_frame(tests=[test]))


@pytest.mark.parametrize(
    'fields,names',
    [
        ({'program': 'print(1)'}, 'program is not an object'),
        ({'program': dict(python_program(), runtime='java')}, 'program.runtime'),
        ({'program': dict(python_program(), run=['./main'])}, 'program.compile, output, run and binary'),
        ({'program': binary_program(run=None)}, 'program.run is null'),
        ({'program': binary_program(compile=None)}, 'program.compile or output is null'),
        ({'program': binary_program(compile=[])}, 'program.compile'),
        ({'program': binary_program(binary='not base64!')}, 'program.binary is not base64'),
        ({'program': binary_program(), 'tests': [{'stdin': '', 'call': ['f', '[]']}]}, 'a call test of a program'),
        ({'tests': {'stdin': ''}}, 'tests is not a list'),
        ({'tests': [{'stdin': 1, 'call': None}]}, r'tests\[0\].stdin'),
        ({'tests': [{'stdin': '', 'call': ['f', []]}]}, r'tests\[0\].call'),
        ({'checker': python_program(), 'answers': None}, 'answers'),
        ({'checker': python_program(), 'answers': ['1\n']}, 'answers is not one string a test'),
        ({'answers': ['1\n', '2\n']}, 'answers is not null'),
        ({'stop_on_failure': 1}, 'stop_on_failure'),
        ({'ack_window': -1}, 'ack_window'),
        ({'compile_memory_mb': 0}, 'compile_memory_mb'),
        ({'isolation': 'none'}, 'isolation'),
        ({'wait_ms': -1}, 'wait_ms'),
        ({'tenant': 7}, 'tenant'),
    ],
)
def test_a_judge_frame_not_as_the_runner_writes_it_is_refused_naming_the_field(fields, names):
    with pytest.raises(FrameError, match=names) as refused:
        parse_frame(judge_frame(**fields))
    assert refused.value.frame_id == 'j'


def test_the_runners_word_on_a_judge_acks_and_stops_typed_and_kept_apart_from_jobs():
    assert parse_frame({'op': 'judge_ack', 'id': 'j', 'index': 3}) == JudgeAck('j', 3)
    assert parse_frame({'op': 'judge_stop', 'id': 'j'}) == JudgeStop('j')
    assert WORDS == (JudgeAck, JudgeStop)
    for frame, field in (
        ({'op': 'judge_ack', 'id': 'j', 'index': -1}, 'index'),
        ({'op': 'judge_ack', 'id': 'j', 'index': True}, 'index'),
        ({'op': 'judge_ack', 'id': 'j'}, 'no index'),
        ({'op': 'judge_stop', 'id': 7}, 'id'),
    ):
        with pytest.raises(FrameError, match=field) as refused:
            parse_frame(frame)
        assert refused.value.op in WORD_OPS
