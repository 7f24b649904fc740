"""The built session_host.py parses each cell's frame once, as the executor does: a refused one is answered
(infra_error, BadFrame, naming the field), nothing runs, and the session keeps its state for the next cell."""
import json

from exec_frames import exec_frame
from session_hosts import session


def test_a_cell_whose_frame_is_refused_is_answered_and_the_session_goes_on(tmp_path):
    with session(tmp_path) as (conn, answers):

        def cell(frame):
            conn.sendall((json.dumps(frame) + '\n').encode())
            return json.loads(answers.readline())

        assert cell(exec_frame('c1', 'x = 41'))['status'] == 'ok'
        refused = cell(dict(exec_frame('c2', 'x = 0'), memory_mb=None))
        assert (refused['id'], refused['status'], refused['error']['type']) == ('c2', 'infra_error', 'BadFrame')
        assert 'memory_mb' in refused['error']['message']
        missing = exec_frame('c3', 'x = 0')
        del missing['timeout_ms']
        assert 'no timeout_ms' in cell(missing)['error']['message']
        after = cell(exec_frame('c4', 'print(x + 1)'))
        assert (after['status'], after['stdout']) == ('ok', '42\n'), 'nothing of the refused cells ran'
