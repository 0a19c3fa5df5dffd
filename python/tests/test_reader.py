"""ffyolo.Reader against a pure-Python parse of the same shards (ffr_format.py)."""

import os
import pickle
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

import ffyolo
from ffr_format import parse_shard, write_shard

BACKENDS = ["auto", "io_uring", "pread", "mmap"]


def expected(shard_dir: Path) -> list[bytes]:
    return [s for shard in sorted(shard_dir.glob("*.ffr")) for s in parse_shard(shard)]


def open_reader(path: Path, backend: str) -> ffyolo.Reader:
    """A Reader on `backend`; skips when the kernel refuses io_uring (Docker's seccomp does)."""
    try:
        reader = ffyolo.Reader(path, backend=backend)
    except OSError as e:
        if backend == "io_uring":
            pytest.skip(f"io_uring unavailable here: {e}")
        raise
    return reader


@pytest.mark.parametrize("backend", BACKENDS)
def test_bytes_equal_the_python_parse(shard_dir, backend):
    want = expected(shard_dir)
    with open_reader(shard_dir, backend) as reader:
        assert backend == "auto" and reader.backend in ("io_uring", "pread") or reader.backend == backend
        assert len(reader) == len(want) == 17
        assert [reader.read(i) for i in range(len(reader))] == want
        assert [reader[i] for i in range(len(reader))] == want
        order = [16, 0, 3, 3, 16, 7]
        assert reader.read_batch(order) == [want[i] for i in order]
        assert reader[-1] == want[-1]


def test_one_shard_file(shard_dir):
    shard = shard_dir / "PART_00002.ffr"
    assert ffyolo.Reader(shard).read_batch(range(12)) == parse_shard(shard)


def test_direct_io(shard_dir):
    try:
        reader = ffyolo.Reader(shard_dir, direct_io=True)
    except OSError as e:  # tmpfs has no O_DIRECT
        pytest.skip(f"no O_DIRECT here: {e}")
    assert reader.read_batch(range(len(reader))) == expected(shard_dir)


@pytest.mark.parametrize("backend", ["pread", "mmap"])
def test_pickle_reopens_with_the_same_options(shard_dir, backend):
    reader = ffyolo.Reader(shard_dir, backend=backend, verify_checksums=False)
    copy = pickle.loads(pickle.dumps(reader))
    assert copy is not reader
    assert (copy.path, copy.backend, copy.split) == (str(shard_dir), backend, None)
    assert copy.read_batch(range(len(copy))) == expected(shard_dir)


def test_threads_read_at_once(shard_dir):
    want = expected(shard_dir)
    reader = ffyolo.Reader(shard_dir)
    results, errors = {}, []

    def read(t: int) -> None:
        try:
            results[t] = [reader.read_batch(range(len(want))) for _ in range(50)]
        except Exception as e:  # noqa: BLE001 (handed to the main thread)
            errors.append(e)

    threads = [threading.Thread(target=read, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(batch == want for batches in results.values() for batch in batches)


def test_fork_child_is_refused(shard_dir):
    reader = ffyolo.Reader(shard_dir)
    reader.read(0)
    pid = os.fork()
    if pid == 0:  # the child reports through its exit status: 0 when refused as it should be
        try:
            reader.read(0)
            os._exit(1)
        except RuntimeError as e:
            os._exit(0 if "fork" in str(e) else 2)
        except BaseException:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert reader.read(0) == expected(shard_dir)[0]  # the parent's reader is intact


def test_close(shard_dir):
    reader = ffyolo.Reader(shard_dir)
    reader.close()
    assert reader.closed
    with pytest.raises(ValueError, match="closed"):
        reader.read(0)


def test_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        ffyolo.Reader(tmp_path / "nowhere")


def test_bad_backend(shard_dir):
    with pytest.raises(ValueError, match="backend='uring'"):
        ffyolo.Reader(shard_dir, backend="uring")


def test_mmap_with_direct_io(shard_dir):
    with pytest.raises(ValueError, match="mmap"):
        ffyolo.Reader(shard_dir, backend="mmap", direct_io=True)


def test_index_out_of_range(shard_dir):
    reader = ffyolo.Reader(shard_dir)
    with pytest.raises(IndexError, match="17"):
        reader.read(17)
    with pytest.raises(IndexError):
        reader.read_batch([0, -18])
    with pytest.raises(IndexError):
        reader[100]


def test_corrupt_sample_names_file_and_sample(tmp_path):
    shard = tmp_path / "PART_00000.ffr"
    write_shard(shard, [b"first", b"second"])
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF  # the last byte of sample 1, its CRC unchanged
    shard.write_bytes(bytes(data))
    reader = ffyolo.Reader(shard)
    assert reader.read(0) == b"first"
    with pytest.raises(ffyolo.CorruptionError, match=r"PART_00000\.ffr sample 1"):
        reader.read(1)
    assert issubclass(ffyolo.CorruptionError, ValueError)
    assert ffyolo.Reader(shard, verify_checksums=False).read(1) != b"second"


def test_corrupt_header(tmp_path):
    shard = tmp_path / "PART_00000.ffr"
    write_shard(shard, [b"abc"])
    data = bytearray(shard.read_bytes())
    data[12] ^= 0xFF  # sample 0's CRC, covered by the header CRC
    shard.write_bytes(bytes(data))
    with pytest.raises(ffyolo.CorruptionError, match="PART_00000.ffr"):
        ffyolo.Reader(shard)


def test_format_test_vector(tmp_path):
    """docs/format.md's 56-byte test vector: the writer here and the reader agree with it."""
    shard = tmp_path / "v.ffr"
    write_shard(shard, [b"abc", b"hello", b""])
    assert len(shard.read_bytes()) == 56
    assert zlib.crc32(shard.read_bytes()[4:48]) == 0xD41B936B
    assert ffyolo.Reader(shard).read_batch([0, 1, 2]) == [b"abc", b"hello", b""]


def test_import_does_not_import_torch():
    code = "import sys, ffyolo; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
