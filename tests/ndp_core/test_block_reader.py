"""The C++ block reader: positional reads into caller buffers, GIL released."""
import threading

import numpy as np
import pytest

from ndp_core import BlockReader

BYTES = bytes(range(256)) * 1000  # byte i holds i % 256


def test_reads_at_offsets_and_short_at_eof(write_file):
    with BlockReader(str(write_file("blob.bin", BYTES))) as reader:
        assert reader.size == 256_000
        buf = np.zeros(300, dtype=np.uint8)
        assert reader.readinto(buf, 10) == 300
        assert buf[0] == 10 and buf[-1] == (10 + 299) % 256
        assert reader.readinto(buf, 255_900) == 100
        assert reader.readinto(buf, 10**9) == 0
        assert reader.readinto(buf, 0, 5) == 5


def test_rejects_bad_buffers_and_closed_reader(write_file):
    reader = BlockReader(str(write_file("blob.bin", BYTES)))
    with pytest.raises(ValueError):
        reader.readinto(np.zeros(4, dtype=np.int32), 0)
    with pytest.raises(ValueError):
        reader.readinto(np.zeros(4, dtype=np.uint8), 0, 8)
    reader.close()
    assert reader.closed
    with pytest.raises(OSError):
        reader.readinto(np.zeros(4, dtype=np.uint8), 0)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        BlockReader(str(tmp_path / "nope"))


def test_concurrent_readers_get_their_own_bytes(write_file):
    reader = BlockReader(str(write_file("blob.bin", BYTES)))
    errors = []

    def work(offset):
        buf = np.empty(4096, dtype=np.uint8)
        for _ in range(200):
            reader.readinto(buf, offset)
            if buf[0] != offset % 256:
                errors.append(offset)

    threads = [threading.Thread(target=work, args=(k * 1000,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
