"""files: what a request's files may write, and what fetch_files returns and refuses."""
import base64, os

import pytest

from sandfleet_sandbox.files import fetch_files, write_files


def b64(data): return base64.b64encode(data).decode()


def test_write_files_makes_the_directories_and_refuses_a_path_out(tmp_path):
    write_files(str(tmp_path), {'a.txt': b64(b'one'), 'in/deep/b.bin': b64(b'\x00\x01')})
    assert (tmp_path / 'a.txt').read_bytes() == b'one'
    assert (tmp_path / 'in' / 'deep' / 'b.bin').read_bytes() == b'\x00\x01'
    for bad in ('../x', '/etc/x', 'in/../../x'):
        with pytest.raises(ValueError, match='escapes the working directory'):
            write_files(str(tmp_path / 'in'), {bad: b64(b'x')})
    assert not (tmp_path / 'x').exists()


def test_fetch_returns_regular_files_in_the_work_dir_and_leaves_out_the_missing(tmp_path):
    (tmp_path / 'out.txt').write_bytes(b'mine')
    (tmp_path / 'sub').mkdir()
    (tmp_path / 'sub' / 'c.txt').write_bytes(b'deeper')
    os.symlink('out.txt', tmp_path / 'inner-link')  # a link that stays in the work dir is followed
    got = fetch_files(str(tmp_path), ['out.txt', 'sub/c.txt', 'inner-link', 'missing', 'sub'])
    assert got == {'out.txt': b64(b'mine'), 'sub/c.txt': b64(b'deeper'), 'inner-link': b64(b'mine')}


def test_fetch_refuses_links_out_of_the_work_dir(tmp_path):
    secret = tmp_path / 'secret.txt'
    secret.write_bytes(b'not yours')
    work = tmp_path / 'work'
    work.mkdir()
    os.symlink(secret, work / 'out')                      # a file link out
    os.symlink('/proc/self', work / 'me')                 # a directory link out: me/environ
    os.symlink(str(tmp_path), work / 'up')                # up/secret.txt
    got = fetch_files(str(work), ['out', 'me/environ', 'me/status', 'up/secret.txt', '../secret.txt', str(secret)])
    assert got == {}


def test_fetch_refuses_a_fifo_without_blocking(tmp_path):
    os.mkfifo(tmp_path / 'fifo')  # opened to read, it would wait for a writer for ever
    (tmp_path / 'ok').write_bytes(b'x')
    assert fetch_files(str(tmp_path), ['fifo', 'ok']) == {'ok': b64(b'x')}


def test_fetch_refuses_a_file_over_the_limit_instead_of_cutting_it(tmp_path):
    (tmp_path / 'at').write_bytes(b'a' * 100)
    (tmp_path / 'over').write_bytes(b'b' * 101)
    assert fetch_files(str(tmp_path), ['at', 'over'], limit=100) == {'at': b64(b'a' * 100)}


def test_fetch_of_nothing_touches_nothing():
    assert fetch_files('/nonexistent-work-dir', []) == {}
    assert fetch_files('/nonexistent-work-dir', None) == {}
