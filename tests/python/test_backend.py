"""The `ringlab` backend against Gloo, on one world of 3 processes
(mp.spawn, init_method tcp://): every collective on the same inputs through a
ringlab group and a gloo group, compared; where Gloo has no such collective
(reduce_scatter, all_to_all, all_gather_into_tensor, AVG), a reference computed here from
every rank's inputs. The narrow dtypes too: uint8, int8 and float16 against
Gloo (float16 sums whose rounding depends on the order, bit for bit), bool,
int16 and bfloat16, which Gloo refuses, against torch's own arithmetic, and
the object collectives, which move uint8 tensors. Then point to point, async
work, and bad input.

    test_backend.py            (PYTHONPATH holds the built package)
"""

import functools
import sys
import traceback

from common import free_port, require_torch

WORLD = 3


def inputs(rank, n, dtype):
    """Rank r's input: distinct per rank and element, exact in every dtype."""
    import torch
    return (torch.arange(n, dtype=torch.float64) * (rank + 2) - 3 * rank + 1).to(dtype)


def every_rank(n, dtype):
    return [inputs(r, n, dtype) for r in range(WORLD)]


def check_same(name, mine, gloo, exact):
    import torch
    if exact:
        ok = torch.equal(mine, gloo)
    else:
        ok = torch.allclose(mine.double(), gloo.double(), rtol=1e-6, atol=1e-6)
    if not ok:
        raise AssertionError(f"{name}: ringlab {mine} but {gloo}")


def both(rl, gl, name, run, make, exact=True):
    """run(group, tensors) on copies of make() through ringlab and gloo; compares."""
    mine, theirs = make(), make()
    run(rl, mine)
    run(gl, theirs)
    for a, b in zip(mine, theirs):
        check_same(name, a, b, exact)


def compare_collectives(rank, rl, gl):
    import torch
    import torch.distributed as dist
    for dtype, exact in ((torch.int64, True), (torch.float32, False), (torch.float64, False)):
        for n in (1, 7, 300_000):
            tag = f"{dtype} x {n}"
            for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN):
                both(rl, gl, f"all_reduce {op} {tag}",
                     lambda g, t: dist.all_reduce(t[0], op=op, group=g),
                     lambda: [inputs(rank, n, dtype)], exact)
            # Gloo's reduce leaves partial sums on the other ranks; so must ringlab's.
            both(rl, gl, f"reduce {tag}", lambda g, t: dist.reduce(t[0], dst=2, group=g),
                 lambda: [inputs(rank, n, dtype)], exact)
            both(rl, gl, f"broadcast {tag}", lambda g, t: dist.broadcast(t[0], src=1, group=g),
                 lambda: [inputs(rank, n, dtype)], exact)
            both(rl, gl, f"all_gather {tag}",
                 lambda g, t: dist.all_gather(t[1:], t[0], group=g),
                 lambda: [inputs(rank, n, dtype)] +
                 [torch.zeros(n, dtype=dtype) for _ in range(WORLD)], exact)
    small = torch.int64
    both(rl, gl, "all_reduce PRODUCT", lambda g, t: dist.all_reduce(
        t[0], op=dist.ReduceOp.PRODUCT, group=g), lambda: [inputs(rank, 5, small)])
    both(rl, gl, "gather", lambda g, t: dist.gather(t[0], t[1:] if rank == 0 else None, dst=0,
                                                    group=g),
         lambda: [inputs(rank, 4, small)] + [torch.zeros(4, dtype=small) for _ in range(WORLD)])
    both(rl, gl, "scatter", lambda g, t: dist.scatter(
        t[0], [x.clone() for x in every_rank(4, small)] if rank == 2 else None, src=2, group=g),
        lambda: [torch.zeros(4, dtype=small)])
    both(rl, gl, "all_to_all_single", lambda g, t: dist.all_to_all_single(t[0], t[1], group=g),
         lambda: [torch.zeros(6, dtype=small), inputs(rank, 6, small)])


def small(rank, n, dtype):
    """Values in [-4, 4] ([0, 8] unsigned): every sum, product, min and max of
    three is exact in every dtype, or wraps alike on both backends."""
    import torch
    v = (torch.arange(n) * (rank + 2) - 3 * rank + 1) % 9
    return (v if dtype in (torch.uint8, torch.bool) else v - 4).to(dtype)


def compare_narrow_dtypes(rank, rl, gl):
    import torch
    import torch.distributed as dist
    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    bitwise = [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]
    for dtype in (torch.uint8, torch.int8, torch.float16):
        for n in (1, 7, 1000):
            tag = f"{dtype} x {n}"
            for op in ops + (bitwise if dtype != torch.float16 else []):
                both(rl, gl, f"all_reduce {op} {tag}",
                     lambda g, t: dist.all_reduce(t[0], op=op, group=g),
                     lambda: [small(rank, n, dtype)])
            both(rl, gl, f"reduce {tag}", lambda g, t: dist.reduce(t[0], dst=1, group=g),
                 lambda: [small(rank, n, dtype)])
            both(rl, gl, f"all_gather {tag}", lambda g, t: dist.all_gather(t[1:], t[0], group=g),
                 lambda: [small(rank, n, dtype)] +
                 [torch.zeros(n, dtype=dtype) for _ in range(WORLD)])
    # float16 adds round at every hop: 2048 + 1 is 2048 again, so the sum of
    # 2048, 1 and 1 is 2048 or 2050 by the order. Gloo's reduce and ringlab's
    # (its segmented ring) give the same bits on every rank.
    both(rl, gl, "float16 reduce, order-dependent", lambda g, t: dist.reduce(t[0], dst=0, group=g),
         lambda: [torch.tensor([2048.0 if j % WORLD == rank else 1.0 for j in range(12)],
                               dtype=torch.float16)])


def refused_by_gloo(rank):
    """bool, int16 and bfloat16, which torch 1.13's Gloo refuses ("Invalid
    scalar type"), against torch's arithmetic on every rank's inputs."""
    import torch
    import torch.distributed as dist
    for dtype in (torch.bool, torch.int16, torch.bfloat16):
        everyone = [small(r, 7, dtype) for r in range(WORLD)]
        # torch's arithmetic, one rank after another (bool's + and * are or
        # and and); exact here, so the order does not matter.
        expected = {dist.ReduceOp.SUM: functools.reduce(torch.add, everyone),
                    dist.ReduceOp.PRODUCT: functools.reduce(torch.mul, everyone),
                    dist.ReduceOp.MIN: functools.reduce(torch.minimum, everyone),
                    dist.ReduceOp.MAX: functools.reduce(torch.maximum, everyone)}
        for op, want in expected.items():
            t = small(rank, 7, dtype)
            dist.all_reduce(t, op=op)
            check_same(f"all_reduce {op} {dtype}", t, want, True)
        t = small(rank, 7, dtype)
        dist.broadcast(t, src=2)
        check_same(f"broadcast {dtype}", t, small(2, 7, dtype), True)
    t = torch.tensor([1.0, 2.5], dtype=torch.bfloat16)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    check_same("all_reduce AVG bfloat16", t, torch.tensor([1.0, 2.5], dtype=torch.bfloat16), True)


def object_collectives(rank):
    """torch moves Python objects as uint8 tensors (pickles) and their sizes."""
    import torch.distributed as dist
    objects = [{"rank": rank, "text": "x" * rank}, None, None]
    dist.broadcast_object_list(objects, src=0)
    if objects[0] != {"rank": 0, "text": ""}:
        raise AssertionError(f"broadcast_object_list gave {objects}")
    gathered = [None] * WORLD
    dist.all_gather_object(gathered, ("rank", rank, [rank] * rank))
    if gathered != [("rank", r, [r] * r) for r in range(WORLD)]:
        raise AssertionError(f"all_gather_object gave {gathered}")


def compare_with_reference(rank):
    """Collectives torch 1.13's Gloo does not have, against sums in float64."""
    import torch
    import torch.distributed as dist
    n = 4
    lists = [[inputs(r, n, torch.float64) * (j + 1) for j in range(WORLD)] for r in range(WORLD)]
    out = torch.zeros(n, dtype=torch.float64)
    dist.reduce_scatter(out, [t.clone() for t in lists[rank]])
    check_same("reduce_scatter", out, sum(lists[r][rank] for r in range(WORLD)), True)
    flat = torch.zeros(n, dtype=torch.float64)
    dist.reduce_scatter_tensor(flat, torch.cat(lists[rank]))
    check_same("reduce_scatter_tensor", flat, sum(lists[r][rank] for r in range(WORLD)), True)
    gathered = torch.zeros(3 * WORLD, dtype=torch.int64)
    dist.all_gather_into_tensor(gathered, inputs(rank, 3, torch.int64))
    check_same("all_gather_into_tensor", gathered, torch.cat(every_rank(3, torch.int64)), True)
    received = [torch.zeros(2, dtype=torch.int64) for _ in range(WORLD)]
    dist.all_to_all(received, [torch.tensor([10 * rank + j, -j]) for j in range(WORLD)])
    for j in range(WORLD):
        check_same(f"all_to_all from {j}", received[j], torch.tensor([10 * j + rank, -rank]), True)
    mean = inputs(rank, n, torch.float32)
    dist.all_reduce(mean, op=dist.ReduceOp.AVG)
    check_same("all_reduce AVG", mean, sum(every_rank(n, torch.float64)) / WORLD, False)


def point_to_point(rank):
    """A receive posted first must not hold up a later send's completion."""
    import torch
    import torch.distributed as dist
    if rank == 0:
        got = torch.zeros(2)
        pending = dist.irecv(got, src=1, tag=1)  # comes only after tag 3 arrives
        dist.isend(torch.tensor([1.0, 2.0]), dst=1, tag=2).wait()
        dist.send(torch.tensor([3.0, 4.0]), dst=1, tag=3)
        pending.wait()
        check_same("irecv", got, torch.tensor([5.0, 6.0]), True)
    elif rank == 1:
        first, second = torch.zeros(2), torch.zeros(2)
        dist.recv(first, src=0, tag=2)
        dist.recv(second, src=0, tag=3)
        check_same("recv", torch.cat([first, second]), torch.tensor([1.0, 2, 3, 4]), True)
        dist.send(torch.tensor([5.0, 6.0]), dst=0, tag=1)
    work = dist.all_reduce(torch.ones(3), async_op=True)
    work.wait()
    check_same("async all_reduce", work.get_future().wait()[0], torch.full((3,), 3.0), True)


def expect_error(kind, text, run):
    try:
        run()
    except kind as error:
        if text not in str(error):
            raise AssertionError(f"the error says '{error}', not '{text}'") from error
        return
    raise AssertionError(f"no {kind.__name__} saying '{text}'")


def bad_input(rank):
    import torch
    import torch.distributed as dist
    expect_error(ValueError, "has gaps between its elements",
                 lambda: dist.all_reduce(torch.zeros(4, 4)[:, 1]))
    expect_error(ValueError, "its elements share memory",
                 lambda: dist.all_reduce(torch.zeros(1).expand(4)))
    expect_error(ValueError, "is a torch.sparse_coo tensor",
                 lambda: dist.broadcast(torch.zeros(2, 2).to_sparse(), src=0))
    # (The collectives hand a complex tensor over as view_as_real; send does not.)
    expect_error(TypeError, "holds torch.complex64, which ringlab's collectives do not carry",
                 lambda: dist.send(torch.zeros(4, dtype=torch.complex64), dst=(rank + 1) % WORLD))
    expect_error(ValueError, "avg does not apply to dtype int16",
                 lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int16),
                                         op=dist.ReduceOp.AVG))
    # The same number of elements in another dtype: the ranks are told.
    expect_error(ValueError, "the ranks disagree on the dtype",
                 lambda: dist.all_reduce(torch.zeros(2, dtype=torch.float16 if rank == 1
                                                     else torch.bfloat16)))
    # Different sizes on different ranks: every rank says which ranks disagree.
    expect_error(ValueError, "the ranks disagree on the tensor size",
                 lambda: dist.all_reduce(torch.zeros(2 + (rank == 1))))
    # Point to point, the same size in another dtype (float32 on rank 0, int32
    # on rank 1): the frames say the dtype, so both ranks of an exchange are told.
    if rank in (0, 1):
        other = 1 - rank
        mine, theirs = (torch.float32, "int32") if rank == 0 else (torch.int32, "float32")

        def exchange():
            sent = dist.isend(torch.ones(4, dtype=mine), dst=other, tag=9)
            try:
                dist.recv(torch.zeros(4, dtype=mine), src=other, tag=9)
            finally:
                sent.wait()
        expect_error(RuntimeError,
                     f"rank {rank} expected {str(mine)[6:]} elements from rank {other} (", exchange)
        expect_error(RuntimeError, f"but the message holds {theirs}: the ranks passed tensors "
                     "of different dtypes", exchange)


def worker(rank, port):
    import torch.distributed as dist
    import ringlab.torch  # noqa: F401
    try:
        dist.init_process_group("ringlab", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=WORLD)
        gloo = dist.new_group(backend="gloo")
        compare_collectives(rank, dist.group.WORLD, gloo)
        compare_narrow_dtypes(rank, dist.group.WORLD, gloo)
        refused_by_gloo(rank)
        object_collectives(rank)
        compare_with_reference(rank)
        point_to_point(rank)
        bad_input(rank)
        dist.barrier()
    except BaseException:
        traceback.print_exc()
        raise


if __name__ == "__main__":
    require_torch()
    import torch.multiprocessing as mp
    mp.spawn(worker, args=(free_port(),), nprocs=WORLD, join=True)
    print(f"every collective on {WORLD} ranks agrees with gloo (or the float64 reference)")
    sys.exit(0)
