"""frames (and the executor's table of ops, runner_channel.parse_frame): each frame of the runner's parsed once into
its frozen type, every field as the protocol says, or refused naming the field; no default applied."""
import pytest

from exec_frames import RESOLVED, exec_frame
from sandfleet_sandbox.frames import ExecJob, FrameError
from sandfleet_sandbox.runner_channel import SHUTDOWN, parse_frame


def test_an_exec_frame_becomes_a_frozen_exec_job_with_the_runners_values():
    job = parse_frame(exec_frame('7', 'print(1)', files={'a.txt': 'eA=='}, fetch_files=['b'], wait_ms=250, tenant='t'))
    assert isinstance(job, ExecJob)
    assert (job.id, job.code, job.stdin, job.timeout_ms, job.memory_mb) == ('7', 'print(1)', '', 10000, 1024)
    assert (job.fetch_files, job.max_output_bytes, job.isolation, job.wait_ms, job.tenant) == (
        ('b',),
        65536,
        'fork',
        250,
        't',
    )
    assert dict(job.files) == {'a.txt': 'eA=='}
    with pytest.raises(AttributeError):
        job.timeout_ms = 1
    with pytest.raises(TypeError):
        job.files['c'] = ''
    assert set(ExecJob._fields) == set(exec_frame('', '')) - {'op'}, 'every field of the frame, and only those'


def test_every_field_is_required_none_is_defaulted():
    for name in ('id', 'code', *RESOLVED):
        frame = exec_frame('7', 'x')
        del frame[name]
        with pytest.raises(FrameError, match='no %s' % name) as refused:
            parse_frame(frame)
        assert refused.value.frame_id == (None if name == 'id' else '7')


@pytest.mark.parametrize(
    'field,value',
    [
        ('id', 7),
        ('code', None),
        ('stdin', b'x'),
        ('timeout_ms', 0),
        ('timeout_ms', 1.5),
        ('timeout_ms', True),
        ('memory_mb', '64'),
        ('max_output_bytes', -1),
        ('files', []),
        ('files', {'a': None}),
        ('fetch_files', ('a',)),
        ('fetch_files', [1]),
        ('isolation', 'none'),
        ('wait_ms', '5'),
        ('wait_ms', float('nan')),
        ('tenant', 1),
    ],
)
def test_a_field_of_another_type_is_refused_by_its_name(field, value):
    with pytest.raises(FrameError, match=field):
        parse_frame(dict(exec_frame('7', 'x'), **{field: value}))


def test_shutdown_and_what_is_no_frame():
    assert parse_frame({'op': 'shutdown'}) is SHUTDOWN
    with pytest.raises(FrameError, match='no known op') as refused:
        parse_frame({'op': 'judge?', 'id': 'j'})
    assert refused.value.frame_id == 'j'
    with pytest.raises(FrameError, match='not a JSON object'):
        parse_frame(['exec'])


def test_an_op_that_is_no_string_is_refused_not_raised():
    with pytest.raises(FrameError, match='no known op'):
        parse_frame({'op': ['exec'], 'id': 'j'})
