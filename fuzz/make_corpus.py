#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus, fuzz/corpus/<target>/: a handful of
valid inputs each, laid out as transport/tcp/framing.hpp and
store/protocol.hpp document them (so the seeds do not come from the code
they test). Run it again after a wire format changes: python3
fuzz/make_corpus.py"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FRAME_VERSION, STORE_VERSION = 2, 3
DATA, HELLO, HELLO_ACK, GOODBYE, ABORT, WAITING = 1, 2, 3, 4, 5, 6
OP = dict(hello=1, set=2, get=3, add=4, wait=5, compare_set=6, check=7, delete=8,
          num_keys=9, auth=10)
JOB = 0x5EED0F0B5EED0F0B  # fuzz/handshake.cpp's job id


def frame(kind, source, tag, payload, length=None):
    n = len(payload) if length is None else length
    return b"RLTF" + struct.pack("<HHiIQQ", FRAME_VERSION, kind, source, 0, tag, n) + payload


def hello(world, dest, job, nonce=bytes(range(16)), proof=bytes(32)):
    return struct.pack("<IiQ", world, dest, job) + nonce + proof


def strings(*items):
    return b"".join(struct.pack("<I", len(s)) + s for s in items)


def store(op, *args, number=0, request=True):
    body = strings(*args)
    return (b"RLSQ" if request else b"RLSR") + struct.pack(
        "<HHIIq", STORE_VERSION, op if request else 0, len(body), 0, number) + body


def corpus():
    yield "frame", {
        "data": frame(DATA, 1, 7, b"\x01\x02\x03\x04"),
        "hello": frame(HELLO, 2, 0, hello(4, 1, 99)),
        "hello_ack": frame(HELLO_ACK, 0, 0, hello(4, 2, 99)),
        "goodbye": frame(GOODBYE, 3, 0, b""),
        "abort": frame(ABORT, 1, 0, struct.pack("<i", 2) + b"rank 2 timed out"),
        "waiting": frame(WAITING, 1, 0, struct.pack("<iI", 3, 1)),
        "store_set": store(OP["set"], b"key", b"value"),
        "store_reply": store(0, b"value", request=False),
    }
    # fuzz/store.cpp: first byte even = after a correct hello and proof.
    yield "store", {
        "set_get": b"\x00" + store(OP["set"], b"k", b"v") + store(OP["get"], b"k", number=100),
        "add": b"\x00" + store(OP["add"], b"counter", number=5) + store(OP["add"], b"counter",
                                                                       number=-2),
        "wait_missing": b"\x00" + store(OP["wait"], b"absent", b"k", number=50),
        "compare_set": b"\x00" + store(OP["compare_set"], b"c", b"", b"1") +
                       store(OP["compare_set"], b"c", b"1", b"2"),
        "check_delete": b"\x00" + store(OP["check"], b"k") + store(OP["delete"], b"k") +
                        store(OP["num_keys"]),
        "hello_only": b"\x01" + store(OP["hello"], bytes(range(16))),
        "auth_first": b"\x01" + store(OP["auth"], bytes(32)),
    }
    # fuzz/handshake.cpp: first byte odd = a hello; the second byte says
    # which fields are right (bits 0-3), and whether a second hello follows
    # (bit 4); then source, world, destination, job id, nonce, proof.
    fields = struct.pack("<iIiQ", 1, 3, 0, JOB) + bytes(range(16))
    yield "handshake", {
        "raw_hello": b"\x00" + frame(HELLO, 1, 0, hello(3, 0, JOB)),
        "right_hello": b"\x01\x0f" + fields,
        "right_then_proof": b"\x01\x1f" + fields + bytes(32),
        "wrong_job": b"\x01\x07" + struct.pack("<iIiQ", 1, 3, 0, 12345) + bytes(16),
        "rank_2": b"\x01\x8f" + fields,
        "garbage": b"\x00GET / HTTP/1.1\r\n\r\n",
    }
    yield "environment", {
        "torchrun": b"RANK=1\nWORLD_SIZE=4\nLOCAL_RANK=1\nMASTER_ADDR=127.0.0.1\nMASTER_PORT=29500\n",
        "slurm": b"SLURM_PROCID=3\nSLURM_NTASKS=8\nSLURM_LOCALID=1\nMASTER_PORT=29501\n",
        "openmpi": b"OMPI_COMM_WORLD_RANK=0\nOMPI_COMM_WORLD_SIZE=2\n"
                   b"OMPI_COMM_WORLD_LOCAL_RANK=0\nMASTER_PORT=1234\n",
        "ringlab": b"RANK=0\nWORLD_SIZE=1\nMASTER_PORT=29500\nRINGLAB_BIND_ADDR=0.0.0.0\n"
                   b"RINGLAB_TIMEOUT_MS=30000\nRINGLAB_HANDSHAKE_TIMEOUT_MS=5000\n"
                   b"RINGLAB_JOB_TOKEN=abc\n",
        "too_big": b"RANK=0\nWORLD_SIZE=1048577\nMASTER_PORT=29500\n",
    }


def main():
    for target, seeds in corpus():
        folder = os.path.join(HERE, "corpus", target)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        for name, data in seeds.items():
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)
        print(f"{folder}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
