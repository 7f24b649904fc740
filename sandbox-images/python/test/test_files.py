"""files: where a request's files may be written, and what fetch_files returns and refuses (and why)."""
import base64
import os

import pytest

from sandfleet_sandbox.files import fetch_files, write_files


def b64(data):
    return base64.b64encode(data).decode()


@pytest.fixture
def sandbox(tmp_path):
    """A work dir and a second writable place beside it (as /mnt is beside the work dir), and a dir outside both."""
    work, mnt, outside = tmp_path / 'work', tmp_path / 'mnt', tmp_path / 'outside'
    for d in (work, mnt, outside):
        d.mkdir()
    (outside / 'secret.txt').write_bytes(b'not yours')
    return work, mnt, outside, [str(work), str(mnt)]


def test_write_files_by_relative_or_absolute_path_in_a_place_and_refuses_one_out(sandbox):
    work, mnt, outside, places = sandbox
    write_files(
        str(work), {'a.txt': b64(b'one'), 'in/deep/b.bin': b64(b'\x00\x01'), str(mnt / 'c/d.txt'): b64(b'abs')}, places
    )
    assert (work / 'a.txt').read_bytes() == b'one'
    assert (work / 'in' / 'deep' / 'b.bin').read_bytes() == b'\x00\x01'
    assert (mnt / 'c' / 'd.txt').read_bytes() == b'abs'
    for bad in ('../outside/x', str(outside / 'x'), 'in/../../outside/x', '/etc/x'):
        with pytest.raises(ValueError, match="outside the sandbox's writable places"):
            write_files(str(work), {bad: b64(b'x')}, places)
    os.symlink(str(outside), work / 'away')
    with pytest.raises(ValueError, match="a link leads out of the sandbox's writable places"):
        write_files(str(work), {'away/x': b64(b'x')}, places)
    with pytest.raises(ValueError, match='NUL'):
        write_files(str(work), {'a\0b': b64(b'x')}, places)
    assert os.listdir(outside) == ['secret.txt']


def test_fetch_returns_regular_files_in_the_places_by_relative_or_absolute_path(sandbox):
    work, mnt, _, places = sandbox
    (work / 'out.txt').write_bytes(b'mine')
    (work / 'sub').mkdir()
    (work / 'sub' / 'c.txt').write_bytes(b'deeper')
    (mnt / 'b').write_bytes(b'in mnt')
    os.symlink('out.txt', work / 'inner-link')  # a link that stays in a place is followed
    os.symlink(str(mnt / 'b'), work / 'to-mnt')  # from one place to another too
    files, errors = fetch_files(
        str(work), ['out.txt', 'sub/c.txt', 'inner-link', 'to-mnt', str(mnt / 'b'), str(work / 'out.txt')], places
    )
    assert files == {
        'out.txt': b64(b'mine'),
        'sub/c.txt': b64(b'deeper'),
        'inner-link': b64(b'mine'),
        'to-mnt': b64(b'in mnt'),
        str(mnt / 'b'): b64(b'in mnt'),
        str(work / 'out.txt'): b64(b'mine'),
    }
    assert errors == {}


def test_fetch_names_why_each_refused_file_is_left_out(sandbox):
    work, _, outside, places = sandbox
    secret = outside / 'secret.txt'
    os.symlink(str(secret), work / 'out')  # a file link out
    os.symlink('/proc/self', work / 'me')  # a directory link out: me/environ
    os.symlink(str(outside), work / 'up')  # up/secret.txt
    (work / 'dir').mkdir()
    files, errors = fetch_files(
        str(work),
        ['out', 'me/environ', 'up/secret.txt', '../outside/secret.txt', str(secret), '/etc/passwd', 'missing', 'dir'],
        places,
    )
    assert files == {}
    link_out, outside_places = (
        "a link leads out of the sandbox's writable places",
        "outside the sandbox's writable places",
    )
    assert {
        k: (link_out if link_out in v else outside_places if outside_places in v else v) for k, v in errors.items()
    } == {
        'out': link_out,
        'me/environ': link_out,
        'up/secret.txt': link_out,
        '../outside/secret.txt': outside_places,
        str(secret): outside_places,
        '/etc/passwd': outside_places,
        'missing': 'no such file',
        'dir': 'a directory',
    }


def test_fetch_refuses_a_fifo_without_blocking(sandbox):
    work, _, _, places = sandbox
    os.mkfifo(work / 'fifo')  # opened to read, it would wait for a writer for ever
    (work / 'ok').write_bytes(b'x')
    assert fetch_files(str(work), ['fifo', 'ok'], places) == ({'ok': b64(b'x')}, {'fifo': 'not a regular file'})


def test_fetch_refuses_a_file_over_the_limit_instead_of_cutting_it(sandbox):
    work, _, _, places = sandbox
    (work / 'at').write_bytes(b'a' * 100)
    (work / 'over').write_bytes(b'b' * 101)
    assert fetch_files(str(work), ['at', 'over'], places, limit=100) == (
        {'at': b64(b'a' * 100)},
        {'over': 'larger than 100 bytes: not returned'},
    )


def test_fetch_of_nothing_touches_nothing():
    assert fetch_files('/nonexistent-work-dir', [], ['/nonexistent-work-dir']) == ({}, {})
    assert fetch_files('/nonexistent-work-dir', None, ['/nonexistent-work-dir']) == ({}, {})
