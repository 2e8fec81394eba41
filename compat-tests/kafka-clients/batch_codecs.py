#!/usr/bin/python3
"""batch_codecs.py PARTITION_DIR: prints the compression codec of every
record batch stored in the partition's .log segments, one name per line
(none gzip snappy lz4 zstd), so a check can prove that a client really
compressed (librdkafka silently sends uncompressed batches when the broker
advertises a Produce range it does not like)."""
import glob
import os
import struct
import sys

CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def main():
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.log"))):
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos + 61 <= len(data):
            (length,) = struct.unpack_from(">i", data, pos + 8)
            magic = data[pos + 16]
            (attrs,) = struct.unpack_from(">h", data, pos + 21)
            if magic != 2 or length < 49:
                sys.exit("%s: bad batch at %d (magic %d, length %d)" % (path, pos, magic, length))
            print(CODECS.get(attrs & 7, "unknown(%d)" % (attrs & 7)))
            pos += 12 + length


main()
