#!/usr/bin/python3
"""Asks real PyTorch (Debian's python3-torch 1.13, with its Gloo) what ringlab's
dtypes must do, and writes the answers as golden files for
tests/test_dtype_golden.cpp and tests/test_gloo_golden.cpp:

  dtype_print.json    repr() of tensors of every dtype: which dtypes are named,
                      how floats are formatted, bool's True/False, wrapping
                      at 80 columns, summarizing with "..."
  dtype_convert.json  float16 and bfloat16 from doubles, as torch rounds them
                      (torch.tensor(x, dtype=...)): the bits
  dtype_arith.json    one step of each reduce op on each dtype, by torch's
                      own arithmetic: a + b, a * b, torch.minimum and
                      torch.maximum (of two equal values the first, as
                      Gloo keeps it), &, |, ^ and a / world (AVG's division);
                      integers wrap, float16 and bfloat16 round each step,
                      nan propagates through min and max
  dtype_gloo.json     torch.distributed on Gloo, 4 processes: every
                      collective and op on every dtype Gloo takes, each
                      rank's inputs and outputs; the dtypes Gloo refuses,
                      with its message; and float16 sums whose result
                      depends on the order in which the ranks' values are
                      added (the hop-by-hop rounding ringlab must match)

Every value is written as text: integers in decimal, floats with
float.hex() (exact; "nan", "inf", "-inf"), bools as True/False; in
dtype_print.json a run of 4 or more equal values is [text, count].

Run it with Debian's python3-torch (torch is not a build or test dependency;
the outputs are kept in the repository):

    /usr/bin/python3 tests/golden/make_dtype_golden.py
"""
import datetime
import json
import os
import random
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]
FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
WORLD = 4


def name(dtype):
    return str(dtype).replace("torch.", "")


def text(dtype, value):
    if dtype == torch.bool:
        return "True" if value else "False"
    if dtype in FLOATS:
        return float.hex(float(value))
    return str(int(value))


def values(t):
    flat = t.reshape(-1)
    if t.dtype in FLOATS:
        flat = flat.double()
    return [text(t.dtype, v) for v in flat.tolist()]


def compact(value):
    return json.dumps(value, separators=(",", ":"))


def write(file, data):
    """One case per line: diffs stay readable, the file small."""
    with open(os.path.join(HERE, file), "w") as out:
        if isinstance(data, list):
            out.write("[\n" + ",\n".join(compact(c) for c in data) + "\n]\n")
        else:
            items = [f"{json.dumps(k)}:{compact(v)}" for k, v in data.items()]
            out.write("{\n" + ",\n".join(items) + "\n}\n")
    print("wrote", file)


# ---- printing -----------------------------------------------------------------

def runs(texts):
    """Runs of 4 or more equal values as [text, count] (zeros(1001))."""
    out = []
    for v in texts:
        if out and isinstance(out[-1], list) and out[-1][0] == v:
            out[-1][1] += 1
        elif len(out) >= 3 and out[-3:] == [v, v, v]:
            out[-3:] = [[v, 4]]
        else:
            out.append(v)
    return out


def print_cases():
    cases = []

    def add(t):
        cases.append({"dtype": name(t.dtype), "dim": t.dim(), "values": runs(values(t)),
                      "repr": repr(t)})

    for dtype in DTYPES:
        add(torch.tensor([], dtype=dtype))
        add(torch.tensor([1, 0], dtype=dtype))
        add(torch.tensor(1, dtype=dtype))
        add(torch.tensor([0, 0, 0], dtype=dtype))
        if dtype == torch.bool:
            add(torch.tensor([True, False, True]))
            add(torch.tensor([True, True]))
            add(torch.tensor(False))
            add(torch.tensor([i % 3 == 0 for i in range(30)]))
            add(torch.tensor([i % 2 == 0 for i in range(1001)]))
            continue
        add(torch.arange(100).to(dtype))
        add(torch.arange(13).to(dtype))
        add(torch.arange(14).to(dtype))
        add(torch.arange(20).to(dtype))
        add(torch.arange(1001).to(dtype))
        add(torch.tensor([16, 20], dtype=dtype))
        if dtype != torch.uint8:
            add(torch.tensor([-1, 2, -100, 7], dtype=dtype))
        if dtype in FLOATS:
            nan, inf = float("nan"), float("inf")
            for row in ([0.5, 1.25], [0.1, 0.2], [-0.0], [-0.0, 1.0], [nan, inf, -inf],
                        [1.0, nan], [100.0, nan], [0.5, inf], [1e-5, 1.0], [1e-5, -inf],
                        [1.0, 10000.0], [1.0, 1000.0], [0.5, 1000.5], [1e9, 2e9],
                        [1e-4, 0.01], [0.0, 1e-5, 1.0], [65504.0, -65504.0], [70000.0],
                        [6e-8, 1.0], [3.140625, 2.71875], [0.333333, 12.5, 0.5],
                        [1e38, 3e38], [1e-40, 1.0], [2.5], [12345.678]):
                add(torch.tensor(row, dtype=dtype))
            add(torch.tensor(2.5, dtype=dtype))
            add(torch.tensor(float("nan"), dtype=dtype))
            add(torch.tensor(1e-5, dtype=dtype))
            add(torch.tensor([0.5 + i for i in range(10)], dtype=dtype))
            add(torch.tensor([0.5 + i for i in range(8)], dtype=dtype))
            add(torch.arange(1001).to(dtype) * 0.5)
            add(torch.zeros(1001, dtype=dtype))
        else:
            info = torch.iinfo(dtype)
            add(torch.tensor([info.min, info.max], dtype=dtype))
            add(torch.tensor([info.min] * 4, dtype=dtype))
    return cases


# ---- conversion to the 16-bit floats --------------------------------------------

def convert_cases():
    rng = random.Random(20261)
    inputs = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"),
              1 + 2**-11, 1 + 2**-11 + 2**-40, 1 + 3 * 2**-11, 1 + 2**-8, 1 + 2**-8 + 2**-30,
              1 + 3 * 2**-8, 65504.0, 65519.0, 65520.0, 1e5, 3.3895313892515355e38, 3.4e38,
              1e39, 2**-24, 2**-25, 2**-25 + 2**-40, 3 * 2**-26, 2**-14, 2**-14 - 2**-25,
              2**-126, 2**-133, 2**-149, 1e-45, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, 3.14159, 12345.678]
    for _ in range(1500):
        inputs.append(rng.choice((-1, 1)) * rng.random() * 2.0 ** rng.randint(-30, 20))
    for _ in range(500):
        inputs.append(rng.choice((-1, 1)) * rng.random() * 2.0 ** rng.randint(-140, 130))
    out = {"inputs": [float.hex(x) for x in inputs]}
    for dtype in (torch.float16, torch.bfloat16):
        bits = torch.tensor(inputs, dtype=dtype).view(torch.int16).tolist()
        out[name(dtype)] = [b & 0xFFFF for b in bits]
    return out


# ---- one step of each op, by torch's arithmetic ---------------------------------

def operand_pairs(dtype, rng):
    if dtype == torch.bool:
        a = [False, False, True, True]
        b = [False, True, False, True]
        return torch.tensor(a), torch.tensor(b)
    if dtype in FLOATS:
        n = 1000 if dtype in (torch.float16, torch.bfloat16) else 200
        if dtype in (torch.float16, torch.bfloat16):
            # Random bit patterns: every exponent, subnormals, inf and nan.
            a = torch.tensor([rng.getrandbits(16) for _ in range(n)], dtype=torch.int32)
            b = torch.tensor([rng.getrandbits(16) for _ in range(n)], dtype=torch.int32)
            a = a.to(torch.int16).view(dtype)
            b = b.to(torch.int16).view(dtype)
        else:
            a = torch.tensor([rng.choice((-1, 1)) * rng.random() * 2.0 ** rng.randint(-20, 20)
                              for _ in range(n)], dtype=dtype)
            b = torch.tensor([rng.choice((-1, 1)) * rng.random() * 2.0 ** rng.randint(-20, 20)
                              for _ in range(n)], dtype=dtype)
        special = [0.0, -0.0, 1.0, float("nan"), float("inf"), float("-inf"), 2.0, -3.5]
        sa = torch.tensor([x for x in special for _ in special], dtype=dtype)
        sb = torch.tensor([y for _ in special for y in special], dtype=dtype)
        return torch.cat([sa, a]), torch.cat([sb, b])
    info = torch.iinfo(dtype)
    edges = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.max // 2 + 1]
    a = [x for x in edges for _ in edges] + [rng.randint(info.min, info.max) for _ in range(100)]
    b = [y for _ in edges for y in edges] + [rng.randint(info.min, info.max) for _ in range(100)]
    return torch.tensor(a, dtype=dtype), torch.tensor(b, dtype=dtype)


def arith_cases():
    rng = random.Random(1313)
    cases = []
    for dtype in DTYPES:
        a, b = operand_pairs(dtype, rng)
        # min and max: torch.minimum and torch.maximum (nan propagates), except
        # that of two equal values (0.0 and -0.0) the first is kept, as Gloo's
        # std::min and std::max keep it (torch.maximum keeps the second).
        ops = {"sum": a + b if dtype != torch.bool else a | b,
               "prod": a * b if dtype != torch.bool else a & b,
               "min": torch.where(a == b, a, torch.minimum(a, b)),
               "max": torch.where(a == b, a, torch.maximum(a, b))}
        if dtype == torch.bool:
            # torch's bool + and * are or and and; checked here, not assumed.
            assert torch.equal(torch.add(a, b), a | b) and torch.equal(torch.mul(a, b), a & b)
        if dtype not in FLOATS:
            ops.update({"band": a & b, "bor": a | b, "bxor": a ^ b})
        else:
            for world in (3, 4):
                ops[f"avg{world}"] = a / world
        for op, out in ops.items():
            assert out.dtype == dtype, (dtype, op, out.dtype)
        cases.append({"dtype": name(dtype), "a": values(a), "b": values(b),
                      "out": {op: values(out) for op, out in ops.items()}})
    return cases


# ---- Gloo ---------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def inputs_for(dtype, rank):
    """Six elements per rank; the floats' sums and products are exact in
    every dtype, whatever the order (the order test is gloo_order)."""
    if dtype in FLOATS:
        row = [rank + 1, 0.5 * rank - 1.25, [8, -3, 0.5, 16][rank], 2.0 ** -(rank + 3),
               -3 * (rank + 1), [-0.0, 0.0, float("-inf"), float("inf")][rank]]
        return torch.tensor(row, dtype=dtype)
    row = [rank + 1, 3 * rank - 5, 100 + 7 * rank, 60 * (rank + 1), 2 ** (rank + 1),
           [-1, 85, 15, 51][rank], [2**62, 2**62 + 5, 2**40 + 3, 7][rank]]
    return torch.tensor(row, dtype=torch.int64).to(dtype)  # wraps into the narrow ones


GLOO_OPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
            "max": dist.ReduceOp.MAX, "band": dist.ReduceOp.BAND, "bor": dist.ReduceOp.BOR,
            "bxor": dist.ReduceOp.BXOR}


def gloo_cases_of(dtype, rank):
    """(case, this rank's output) for every collective and op on dtype."""
    x = inputs_for(dtype, rank)
    ops = [op for op in GLOO_OPS if dtype not in FLOATS or op in ("sum", "prod", "min", "max")]
    for op in ops:
        t = x.clone()
        dist.all_reduce(t, op=GLOO_OPS[op])
        yield {"collective": "all_reduce", "op": op}, [t]
        t = x.clone()
        dist.reduce(t, dst=3, op=GLOO_OPS[op])
        yield {"collective": "reduce", "op": op, "root": 3}, [t]
    t = x.clone()
    dist.broadcast(t, src=1)
    yield {"collective": "broadcast", "root": 1}, [t]
    outs = [torch.zeros_like(x) for _ in range(WORLD)]
    dist.all_gather(outs, x)
    yield {"collective": "all_gather"}, outs
    outs = [torch.zeros_like(x) for _ in range(WORLD)] if rank == 2 else None
    dist.gather(x, outs, dst=2)
    yield {"collective": "gather", "root": 2}, outs or []
    t = torch.zeros_like(x)
    pieces = [inputs_for(dtype, k) for k in range(WORLD)] if rank == 1 else None
    dist.scatter(t, pieces, src=1)
    yield {"collective": "scatter", "root": 1}, [t]
    out = torch.zeros(WORLD * 2, dtype=dtype)
    dist.all_to_all_single(out, torch.cat([x[:2]] * WORLD) if rank % 2 else x[:2].repeat(WORLD))
    yield {"collective": "all_to_all_single"}, [out]


def gloo_order_inputs(rank):
    """float16 sums that depend on the order of the adds: element j is
    2048 on rank j % 4 and 1 elsewhere (2048 + 1 rounds back to 2048, while
    1 + 1 + 1 + 2048 is 2051, rounded to 2052); then the same with 0.5 and
    1024. Sixteen elements, so that every chunk of every ring holds some."""
    row = [2048.0 if j % WORLD == rank else 1.0 for j in range(8)]
    row += [1024.0 if j % WORLD == rank else 0.5 for j in range(8)]
    return torch.tensor(row, dtype=torch.float16)


def gloo_rank(rank, port, folder):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)
    results = []
    for dtype in DTYPES:
        if dtype in (torch.bool, torch.int16, torch.bfloat16):
            continue  # refused by Gloo: see gloo_refusals
        for case, outputs in gloo_cases_of(dtype, rank):
            case.update({"dtype": name(dtype), "rank": rank,
                         "input": values(inputs_for(dtype, rank)),
                         "outputs": [values(o) for o in outputs],
                         "reprs": [repr(o) for o in outputs]})
            results.append(case)
    order = []
    for collective in ("all_reduce", "reduce"):
        t = gloo_order_inputs(rank)
        if collective == "all_reduce":
            dist.all_reduce(t)
        else:
            dist.reduce(t, dst=0)
        order.append({"collective": collective, "rank": rank,
                      "input": values(gloo_order_inputs(rank)), "output": values(t)})
    # A file, not a queue: a rank blocked writing a full pipe would never
    # be joined by mp.spawn, which reads nothing before every rank ends.
    with open(os.path.join(folder, f"rank{rank}.json"), "w") as out:
        json.dump([rank, results, order], out)
    dist.destroy_process_group()


def gloo_refusal(rank, port, dtype_name, queue):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        dist.all_reduce(torch.ones(2, dtype=getattr(torch, dtype_name)))
        message = None
    except RuntimeError as error:
        message = str(error).splitlines()[0]
    if rank == 0:
        queue.put(message)


def gloo_refusals():
    refused = {}
    context = mp.get_context("spawn")
    for dtype in DTYPES:
        queue = context.SimpleQueue()
        mp.spawn(gloo_refusal, args=(free_port(), name(dtype), queue), nprocs=2)
        refused[name(dtype)] = queue.get()
    return refused


def gloo_cases():
    refusals = gloo_refusals()
    with tempfile.TemporaryDirectory() as folder:
        mp.spawn(gloo_rank, args=(free_port(), folder), nprocs=WORLD)
        ranks = []
        for rank in range(WORLD):
            with open(os.path.join(folder, f"rank{rank}.json")) as rank_file:
                ranks.append(json.load(rank_file))
    return {"world": WORLD, "torch": torch.__version__, "refused": refusals,
            "cases": [c for _, results, _ in ranks for c in results],
            "order": [c for _, _, order in ranks for c in order]}


def main():
    write("dtype_print.json", print_cases())
    write("dtype_convert.json", convert_cases())
    write("dtype_arith.json", arith_cases())
    write("dtype_gloo.json", gloo_cases())


if __name__ == "__main__":
    sys.exit(main())
