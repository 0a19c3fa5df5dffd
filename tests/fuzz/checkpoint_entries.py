#!/usr/bin/env python3
"""Turns a checkpoint (a LibTorch zip archive) into a checkpoint_fuzz input:
its entries in order, each [1-byte name length][name][4-byte little-endian
data length][data].

    python3 tests/fuzz/checkpoint_entries.py last.pt tests/fuzz/corpus/checkpoint_fuzz/last
"""
import struct
import sys
import zipfile


def main(src, dst):
    out = bytearray()
    with zipfile.ZipFile(src) as z:
        for info in z.infolist():
            name = info.filename.encode()
            data = z.read(info)
            if len(name) > 255:
                sys.exit(f"{src}: entry name {info.filename!r} is longer than 255 bytes")
            out += bytes([len(name)]) + name + struct.pack("<I", len(data)) + data
    with open(dst, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
