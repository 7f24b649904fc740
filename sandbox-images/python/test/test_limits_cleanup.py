"""limits: a job's own, from its frame; cleanup: what a job leaves is removed, however it hid it."""
import os

from sandfleet_sandbox.cleanup import Cleanup, remove_tree
from sandfleet_sandbox.limits import PAGE, address_space, cpu_backstop_s


def test_a_jobs_address_space_is_its_process_and_its_memory_mb_and_its_cpu_a_backstop_past_its_timeout():
    assert address_space(10, 64) == 10 * PAGE + 64 * 1048576
    assert cpu_backstop_s(250) == 2 and cpu_backstop_s(10000) == 12


def test_remove_tree_removes_what_a_job_made_unreadable_and_deep(tmp_path):
    top = tmp_path / 'work'
    d = top
    for _ in range(300):
        d = d / 'd'
    d.mkdir(parents=True)
    (d / 'f').write_bytes(b'x')
    os.chmod(top / 'd', 0)
    assert remove_tree(str(top)) is True
    assert not top.exists()


def test_clean_empties_the_work_dir_and_the_scratch_dirs_back_to_their_start(tmp_path):
    scratch = tmp_path / 'scratch'
    scratch.mkdir()
    (scratch / 'was-there').write_bytes(b'')
    mode = os.stat(scratch).st_mode & 0o7777
    cleanup = Cleanup(str(tmp_path / 'work'), [str(scratch)])
    (tmp_path / 'work' / 'job-file').write_bytes(b'x')
    (scratch / 'left').mkdir()
    os.chmod(scratch, 0o500)
    assert cleanup.clean() is True
    assert os.listdir(tmp_path / 'work') == []
    assert os.listdir(scratch) == ['was-there']
    assert os.stat(scratch).st_mode & 0o7777 == mode, 'the mode a job changed is set back'
