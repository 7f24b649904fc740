"""A sandbox's cell asked to stream (`cell` frame, `stream: true`): the built session_host.py sends its output in
`output` frames as the cell writes it, before its result frame; what it sends is what the result keeps (the cap
applies, and the result says it cut); an exception's traceback is the result's error alone. A cell not asked to
stream sends no `output` frame."""
import json

from exec_frames import exec_frame
from session_hosts import session


def cell_frame(stream):
    return {'op': 'cell', 'context': 'k.0', 'cwd': None, 'forget': [], 'env': {}, 'main_key': None, 'stream': stream}


def send(conn, *frames):
    conn.sendall(b''.join((json.dumps(f) + '\n').encode() for f in frames))


def frames_until_result(answers):
    """The frames up to and with the result."""
    got = []
    while not got or got[-1]['op'] != 'result':
        got.append(json.loads(answers.readline()))
    return got


def test_a_streamed_cell_sends_its_output_before_it_ends(tmp_path):
    go = tmp_path / 'go'
    code = (
        'import os, sys, time\n'
        'print("a", flush=True)\n'
        'deadline = time.monotonic() + 30\n'
        'while not os.path.exists(%r) and time.monotonic() < deadline:\n'
        '    time.sleep(0.01)\n'
        'print("waited" if os.path.exists(%r) else "gave up")\n'
        'sys.stderr.write("b\\n")\n'
    ) % (str(go), str(go))
    with session(tmp_path) as (conn, answers):
        send(conn, cell_frame(True), exec_frame('c1', code))
        first = json.loads(answers.readline())
        # the cell waits for the go that only this test gives, after it saw the first line: the line came while it ran
        assert first == {'op': 'output', 'id': 'c1', 'stream': 'stdout', 'text': 'a\n'}
        go.write_text('')
        rest = frames_until_result(answers)
        result = rest[-1]
        assert result['status'] == 'ok', result
        streamed = [first] + rest[:-1]
        assert all(f['op'] == 'output' and f['id'] == 'c1' for f in streamed)
        out = ''.join(f['text'] for f in streamed if f['stream'] == 'stdout')
        err = ''.join(f['text'] for f in streamed if f['stream'] == 'stderr')
        assert (out, err) == ('a\nwaited\n', 'b\n')
        assert (result['stdout'], result['stderr']) == (out, err), 'the result keeps what was streamed'


def test_a_streamed_cell_is_capped_and_says_so(tmp_path):
    code = 'import sys\nfor i in range(400):\n    sys.stdout.write("%04d é\\n" % i)\n    sys.stdout.flush()\n'
    with session(tmp_path) as (conn, answers):
        send(conn, cell_frame(True), exec_frame('c1', code, max_output_bytes=1001))
        got = frames_until_result(answers)
        result = got[-1]
        streamed = ''.join(f['text'] for f in got[:-1])
        assert result['truncated']['stdout'] is True
        assert streamed == result['stdout'], 'what was sent is what the cap kept'
        assert len(result['stdout'].encode()) <= 1001
        # 400 lines flushed one by one are sent in far fewer frames (coalesced)
        assert len(got) - 1 < 400


def test_a_streamed_exception_has_its_traceback_in_the_error_alone(tmp_path):
    with session(tmp_path) as (conn, answers):
        send(conn, cell_frame(True), exec_frame('c1', 'print("before")\n{}["missing"]\n'))
        got = frames_until_result(answers)
        result = got[-1]
        assert result['status'] == 'error' and 'KeyError' in result['error']['traceback']
        assert 'Traceback' not in result['stderr']
        assert [f['text'] for f in got[:-1]] == ['before\n']


def test_a_cell_not_asked_to_stream_sends_no_output_frame(tmp_path):
    with session(tmp_path) as (conn, answers):
        send(conn, cell_frame(False), exec_frame('c1', 'print("hi")\n1/0\n'))
        first = json.loads(answers.readline())
        assert first['op'] == 'result' and first['stdout'] == 'hi\n'
        assert 'ZeroDivisionError' in first['stderr'], 'the traceback is on stderr, as before'
