"""FFRecord v1 shards in pure Python, from docs/format.md section 1 alone.

The tests write their shards with this and check ffyolo.Reader against its parse, so the
extension is compared with an implementation that shares no code with it.
"""

import struct
import zlib
from pathlib import Path


def write_shard(path: Path, samples: list[bytes]) -> None:
    """Writes `samples` as one shard: header (meta CRC, N, CRCs, offsets), then the samples."""
    n = len(samples)
    offsets, at = [], 12 + 12 * n
    for s in samples:
        offsets.append(at)
        at += len(s)
    body = struct.pack(f"<q{n}I{n}q", n, *(zlib.crc32(s) for s in samples), *offsets)
    path.write_bytes(struct.pack("<I", zlib.crc32(body)) + body + b"".join(samples))


def parse_shard(path: Path) -> list[bytes]:
    """The samples of the shard at `path`, every CRC checked."""
    data = path.read_bytes()
    meta_crc, n = struct.unpack_from("<Iq", data, 0)
    header_end = 12 + 12 * n
    assert meta_crc in (0, zlib.crc32(data[4:header_end])), f"{path}: header CRC"
    crcs = struct.unpack_from(f"<{n}I", data, 12)
    offsets = list(struct.unpack_from(f"<{n}q", data, 12 + 4 * n)) + [len(data)]
    samples = [data[offsets[i] : offsets[i + 1]] for i in range(n)]
    for i, (s, crc) in enumerate(zip(samples, crcs)):
        assert zlib.crc32(s) == crc, f"{path} sample {i}: CRC"
    return samples
