"""A user's script on "gloo" and on "ringlab": the same program, compared.

Each case below is one small program, as a user writes it, run on every rank
of a world (mp Processes, init_method tcp://): first with backend "gloo",
then with "ringlab", in the same test run. Every rank writes what it sees
(values, and for a failure only that it raised and whether it was a
RuntimeError, as Gloo's are) and the test compares the two backends' lines.
Where Gloo itself fails (it aborts the process, or has no such call, or
returns wrong values) the case says what each backend must print instead,
computed here, and why (EXPECTED).

    test_dropin.py CASE         (PYTHONPATH holds the built package)
    test_dropin.py --list
"""

import datetime
import os
import signal
import sys
import tempfile
import time
import traceback

from common import free_port, require_torch, run

TIMEOUT_S = 5  # the group's timeout where a case waits for nothing: it ends by it
CASES = {}


def case(world, timeout_s=60):
    def register(fn):
        CASES[fn.__name__] = (world, fn, timeout_s)
        return fn
    return register


class Rank:
    """What a case gets: its rank, the world, the backend, and say(), which
    records a line at once (a rank that is killed keeps what it said)."""

    def __init__(self, rank, world, backend, out):
        self.rank, self.world, self.backend = rank, world, backend
        self._out = out

    def say(self, text):
        self._out.write(f"rank {self.rank}: {text}\n")
        self._out.flush()

    def outcome(self, what, fn, ringlab_says=()):
        """Says what fn() returned, or that it raised and whether that was a
        RuntimeError; on ringlab the message must hold each of ringlab_says."""
        try:
            self.say(f"{what}: returned {fn()}")
        except Exception as error:  # noqa: BLE001 - what a user's script sees
            kind = "RuntimeError" if isinstance(error, RuntimeError) else type(error).__name__
            missing = [w for w in ringlab_says if w not in str(error)]
            if self.backend == "ringlab" and missing:
                kind += f" whose message lacks {missing}: {error}"
            print(f"rank {self.rank} {what}: {type(error).__name__}: {error}", file=sys.stderr)
            self.say(f"{what}: raised {kind}")

    def die(self):
        """Kills this rank's process at once, as a crash would."""
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def ints(rank, n, dtype=None):
    import torch
    return (torch.arange(n) * (rank + 2) - 3 * rank + 1).to(dtype or torch.int64)


# -- item 1: every call torch routes to the backend ---------------------------------


@case(world=3)
def every_call(r):
    """The calls Gloo has, each as a user's script makes it, with the results
    printed: Gloo's and ringlab's must be the same."""
    import torch
    import torch.distributed as dist
    rank, world = r.rank, r.world
    for op in ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        t = ints(rank, 4)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        r.say(f"all_reduce {op} {t.tolist()}")
    t = ints(rank, 5)
    dist.reduce(t, dst=1)
    r.say(f"reduce {t.tolist()}")
    t = ints(rank, 5)
    dist.broadcast(t, src=2)
    r.say(f"broadcast {t.tolist()}")
    outs = [torch.zeros(3, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(outs, ints(rank, 3))
    r.say(f"all_gather {[o.tolist() for o in outs]}")
    outs = [torch.zeros(3, dtype=torch.int64) for _ in range(world)] if rank == 0 else None
    dist.gather(ints(rank, 3), outs, dst=0)
    r.say(f"gather {outs and [o.tolist() for o in outs]}")
    got = torch.zeros(2, dtype=torch.int64)
    dist.scatter(got, [ints(j, 2) * 7 for j in range(world)] if rank == 1 else None, src=1)
    r.say(f"scatter {got.tolist()}")
    splits = [1 + (rank + j) % 2 for j in range(world)]  # what rank sends to j
    incoming = [1 + (j + rank) % 2 for j in range(world)]
    got = torch.zeros(sum(incoming), dtype=torch.int64)
    dist.all_to_all_single(got, ints(rank, sum(splits)), incoming, splits)
    r.say(f"all_to_all_single uneven {got.tolist()}")
    tensors = [ints(rank, 2), ints(rank, 3)]
    dist.all_reduce_coalesced(tensors)
    r.say(f"all_reduce_coalesced {[t.tolist() for t in tensors]}")
    work = dist.all_reduce(ints(rank, 3), async_op=True)
    work.wait()
    r.say(f"async all_reduce {work.get_future().wait()[0].tolist()} {work.is_completed()}")
    dist.barrier()
    sub = dist.new_group([0, 2])
    if rank in (0, 2):
        t = ints(rank, 2)
        dist.all_reduce(t, group=sub)
        r.say(f"new_group all_reduce {t.tolist()}")
    right, left = (rank + 1) % world, (rank - 1) % world
    got = torch.zeros(2, dtype=torch.int64)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, ints(rank, 2), right),
                                   dist.P2POp(dist.irecv, got, left)])
    r.say(f"batch_isend_irecv {[q.wait() for q in reqs]} {got.tolist()}")
    # Every rank done before any leaves: the ranks end with os._exit, which
    # ringlab's tcp ranks take as a rank's failure, failing a slower peer
    # still in batch_isend_irecv (docs/pytorch.md, "Known limits"); what
    # this case compares is the calls' results.
    dist.barrier()


@case(world=2)
def all_gather_coalesced(r):
    """output_tensor_lists[i] gets rank i's tensors: [[1,2],[3,4]] |
    [[11,12],[13,14]] on 2 ranks."""
    import torch
    import torch.distributed as dist
    mine = [torch.tensor([1, 2]) + 10 * r.rank, torch.tensor([3, 4]) + 10 * r.rank]
    outs = [[torch.zeros(2, dtype=torch.int64) for _ in mine] for _ in range(r.world)]
    dist.all_gather_coalesced(outs, mine)
    r.say(f"{[[t.tolist() for t in lst] for lst in outs]}")
    # Three tensors of different sizes (one dtype: torch requires it).
    mine = [torch.tensor([r.rank]), torch.arange(3) + r.rank, torch.tensor([7, 8]) * r.rank]
    outs = [[torch.zeros_like(t) for t in mine] for _ in range(r.world)]
    dist.all_gather_coalesced(outs, mine, async_op=True).wait()
    r.say(f"{[[t.tolist() for t in lst] for lst in outs]}")


@case(world=3)
def all_gather_coalesced_two_tensors(r):
    """2 tensors on 3 ranks: a tensor count other than the world size."""
    import torch
    import torch.distributed as dist
    mine = [torch.tensor([r.rank]), torch.tensor([10 + r.rank, 20])]
    outs = [[torch.zeros_like(t) for t in mine] for _ in range(r.world)]
    dist.all_gather_coalesced(outs, mine)
    r.say(f"{[[t.tolist() for t in lst] for lst in outs]}")


@case(world=3)
def recv_any_source(r):
    """dist.recv without src returns the sender's rank."""
    import torch
    import torch.distributed as dist
    if r.rank == 0:
        seen = []
        for _ in range(2):
            t = torch.zeros(2)
            sender = dist.recv(t, tag=5)
            seen.append((sender, t.tolist()))
        r.say(f"received {sorted(seen)}")
    else:
        dist.send(torch.tensor([1.0, 2.0]) * r.rank, dst=0, tag=5)
    dist.barrier()
    r.say("done")


@case(world=2)
def multigpu_calls(r):
    """torch's *_multigpu functions hand the backend several tensors per
    process; Gloo takes them on the CPU (EXPECTED), ringlab refuses them."""
    import torch
    import torch.distributed as dist
    import warnings
    warnings.simplefilter("ignore")  # "will be deprecated"
    calls = {"all_reduce_multigpu": lambda ts: dist.all_reduce_multigpu(ts),
             "broadcast_multigpu": lambda ts: dist.broadcast_multigpu(ts, src=0),
             "reduce_multigpu": lambda ts: dist.reduce_multigpu(ts, dst=0)}
    for name, call in calls.items():
        tensors = [torch.tensor([1.0, 2.0]) * (10 * r.rank + j + 1) for j in range(2)]
        r.outcome(name, lambda: call(tensors) or [t.tolist() for t in tensors],
                  ringlab_says=("tensors in one call",))


# -- item 2: point-to-point errors raise in the caller -------------------------------


def p2p_error(r, action, peer_dies=True, ringlab_says=("rank 1",)):
    """Rank 1 dies (or stays silent) after the first barrier; rank 0 runs
    action() and says whether it raised."""
    import torch.distributed as dist
    dist.barrier()
    if r.rank == 1:
        if peer_dies:
            time.sleep(0.5)
            r.die()
        time.sleep(TIMEOUT_S + 6)
        return
    time.sleep(1.0 if peer_dies else 0)
    r.outcome("rank 1 gone" if peer_dies else "rank 1 silent", action, ringlab_says)


@case(world=2)
def recv_from_dead_rank(r):
    import torch
    import torch.distributed as dist
    p2p_error(r, lambda: dist.recv(torch.zeros(4), src=1))


@case(world=2, timeout_s=TIMEOUT_S)
def recv_from_silent_rank(r):
    import torch
    import torch.distributed as dist
    p2p_error(r, lambda: dist.recv(torch.zeros(4), src=1), peer_dies=False,
              ringlab_says=("rank 1", f"{TIMEOUT_S * 1000} ms"))


@case(world=2)
def irecv_from_dead_rank(r):
    import torch
    import torch.distributed as dist
    p2p_error(r, lambda: dist.irecv(torch.zeros(4), src=1).wait())


@case(world=2)
def send_to_dead_rank(r):
    import torch
    import torch.distributed as dist
    p2p_error(r, lambda: dist.send(torch.zeros(1 << 20), dst=1))


@case(world=2)
def isend_to_dead_rank(r):
    import torch
    import torch.distributed as dist
    p2p_error(r, lambda: dist.isend(torch.zeros(1 << 20), dst=1).wait())


@case(world=2)
def batch_with_dead_rank(r):
    import torch
    import torch.distributed as dist
    p2p_error(r, lambda: [q.wait() for q in dist.batch_isend_irecv(
        [dist.P2POp(dist.isend, torch.zeros(1 << 20), 1),
         dist.P2POp(dist.irecv, torch.zeros(4), 1)])])


@case(world=2)
def recv_into_smaller_buffer(r):
    """4 floats sent, room for 3: Gloo aborts the receiving process
    (EnforceNotMet: op.preamble.length <= op.nbytes); ringlab raises."""
    import torch
    import torch.distributed as dist
    if r.rank == 1:
        dist.send(torch.arange(4.0), dst=0)
        time.sleep(2)
        return
    r.outcome("recv of 4 floats into 3", lambda: dist.recv(torch.zeros(3), src=1),
              ringlab_says=("rank 1",))


# -- item 3: objects and half precision ---------------------------------------------


@case(world=3)
def object_collectives(r):
    import torch.distributed as dist
    rank, world = r.rank, r.world
    objects = [{"rank": rank, "text": "x" * rank}, None, [rank] * 3]
    dist.broadcast_object_list(objects, src=1)
    r.say(f"broadcast_object_list {objects}")
    gathered = [None] * world
    dist.all_gather_object(gathered, ("rank", rank, [rank] * rank))
    r.say(f"all_gather_object {gathered}")
    gathered = [None] * world if rank == 2 else None
    dist.gather_object({"from": rank, "long": "y" * (100 * rank)}, gathered, dst=2)
    r.say(f"gather_object {gathered and [(g['from'], len(g['long'])) for g in gathered]}")
    out = [None]
    dist.scatter_object_list(out, [{"to": j, "pad": "z" * j} for j in range(world)]
                             if rank == 0 else None, src=0)
    r.say(f"scatter_object_list {out}")


@case(world=2)
def zero_consolidate_state_dict(r):
    import torch
    from torch.distributed.optim import ZeroRedundancyOptimizer
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=0.1)
    for step in range(2):
        opt.zero_grad()
        model(torch.arange(8.0).reshape(2, 4) + r.rank + step).sum().backward()
        opt.step()
    opt.consolidate_state_dict(to=0)
    if r.rank == 0:
        state = opt.state_dict()["state"]
        r.say(f"consolidated {sorted(state)} "
              f"{[[round(v, 6) for v in state[k]['exp_avg'].flatten().tolist()] for k in sorted(state)]}")
    r.say(f"params {[round(v, 6) for p in model.parameters() for v in p.flatten().tolist()]}")


@case(world=2)
def ddp_uint8_buffer(r):
    """DDP broadcasts rank 0's buffers, a uint8 one among them."""
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 1)
            self.register_buffer("mask", torch.tensor([1, 2, 3], dtype=torch.uint8) * (r.rank + 1))
            self.register_buffer("scale", torch.tensor([0.5, 1.5], dtype=torch.float16) + r.rank)

        def forward(self, x):
            return self.lin(x * self.mask.float())

    torch.manual_seed(r.rank)
    ddp = DDP(Net())
    ddp(torch.ones(2, 3)).sum().backward()
    r.say(f"mask {ddp.module.mask.tolist()} scale {ddp.module.scale.tolist()} "
          f"grad {[round(v, 6) for v in ddp.module.lin.weight.grad.flatten().tolist()]}")


@case(world=2)
def ddp_fp16_compress_hook(r):
    import torch
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.manual_seed(0)
    ddp = DDP(torch.nn.Linear(4, 2))
    ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    x = torch.arange(12.0).reshape(3, 4) / 7 + r.rank
    ddp(x).pow(2).sum().backward()
    r.say(f"grad {[v for p in ddp.parameters() for v in p.grad.flatten().tolist()]}")


# -- item 4: tensors that are not contiguous ----------------------------------------


def matrix(rank):
    import torch
    return (torch.arange(12, dtype=torch.float32) + 100 * rank).reshape(3, 4)


@case(world=2)
def dense_permuted(r):
    """Transposed and channels_last tensors, and tensor lists with gaps where
    Gloo copies them (all_gather's, gather's): Gloo's results."""
    import torch
    import torch.distributed as dist
    rank = r.rank
    t = matrix(rank).t()
    dist.all_reduce(t)
    r.say(f"all_reduce transposed {t.tolist()}")
    t = matrix(rank).t()
    dist.broadcast(t, src=1)
    r.say(f"broadcast transposed {t.tolist()}")
    t = matrix(rank).t()
    dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    r.say(f"reduce transposed {t.tolist()}")
    t = (torch.arange(16.0).reshape(1, 4, 2, 2) + rank).to(memory_format=torch.channels_last)
    dist.all_reduce(t)
    r.say(f"all_reduce channels_last {t.tolist()} {t.is_contiguous(memory_format=torch.channels_last)}")
    out = torch.zeros(3, 4)
    dist.all_gather(list(out.chunk(2, dim=1)), matrix(rank)[:, :2].contiguous())
    r.say(f"all_gather into column chunks {out.tolist()}")
    outs = [torch.zeros(3) for _ in range(2)]
    dist.all_gather(outs, matrix(rank)[:, 1])
    r.say(f"all_gather of a column {[o.tolist() for o in outs]}")
    out = torch.zeros(3, 2)
    dist.gather(matrix(rank)[:, 1].contiguous(), list(out.unbind(1)) if rank == 0 else None,
                dst=0)
    r.say(f"gather into columns {out.tolist()}")


# Gloo returns wrong values for a strided slice it works on in place; ringlab
# refuses it. The right values, computed by hand from matrix(): column 1 of
# rank 0 is 1, 5, 9, of rank 1 101, 105, 109; rows 0 and 2 are 0..3 and 8..11
# (plus 100 on rank 1).
SLICE_CASES = ("all_reduce column", "broadcast column", "all_reduce rows[::2]")


@case(world=2)
def strided_slices(r):
    import torch.distributed as dist
    rank = r.rank
    right = {"all_reduce column": [102.0, 110.0, 118.0],
             "broadcast column": [1.0, 5.0, 9.0],
             "all_reduce rows[::2]": [[100.0, 102.0, 104.0, 106.0], [116.0, 118.0, 120.0, 122.0]]}
    runs = {"all_reduce column": lambda x: dist.all_reduce(x[:, 1]) or x[:, 1],
            "broadcast column": lambda x: dist.broadcast(x[:, 1], src=0) or x[:, 1],
            "all_reduce rows[::2]": lambda x: dist.all_reduce(x[::2]) or x[::2]}
    for name in SLICE_CASES:
        def attempt():
            got = runs[name](matrix(rank)).tolist()
            print(f"rank {rank} {name}: {got}", file=sys.stderr)
            return "right values" if got == right[name] else "wrong values"
        r.outcome(name, attempt, ringlab_says=("gaps", "contiguous()", "Gloo"))


# -- item 5: sparse tensors ---------------------------------------------------------


@case(world=2)
def sparse_tensors(r):
    import torch
    import torch.distributed as dist
    t = torch.tensor([[0.0, 1.0 + r.rank], [2.0, 0.0]]).to_sparse()
    r.outcome("all_reduce sparse", lambda: dist.all_reduce(t) or t.to_dense().tolist(),
              ringlab_says=("sparse", "to_dense()"))
    t = torch.tensor([[0.0, 1.0 + r.rank], [2.0, 0.0]]).to_sparse()
    r.outcome("broadcast sparse", lambda: dist.broadcast(t, src=0),
              ringlab_says=("sparse", "to_dense()"))


# What each backend prints where Gloo does not give the answer: the lines of
# rank 0 and rank 1, by case.
EXPECTED = {
    # Gloo sums every tensor of every rank into each (1 + 2 + 11 + 12 = 26),
    # copies the root's first tensor into each, refuses reduce; ringlab
    # refuses the three.
    "multigpu_calls": {
        "gloo": [f"rank {rank}: {line}" for rank in (0, 1) for line in (
            "all_reduce_multigpu: returned [[26.0, 52.0], [26.0, 52.0]]",
            "broadcast_multigpu: returned [[1.0, 2.0], [1.0, 2.0]]",
            "reduce_multigpu: raised RuntimeError")] + ["rank 0: exit 0", "rank 1: exit 0"],
        "ringlab": [f"rank {rank}: {name}: raised ValueError" for rank in (0, 1) for name in (
            "all_reduce_multigpu", "broadcast_multigpu", "reduce_multigpu")] +
        ["rank 0: exit 0", "rank 1: exit 0"],
    },
    # Gloo aborts the receiving process (SIGABRT).
    "recv_into_smaller_buffer": {
        "gloo": ["rank 0: exit -6", "rank 1: exit 0"],
        "ringlab": ["rank 0: recv of 4 floats into 3: raised RuntimeError",
                    "rank 0: exit 0", "rank 1: exit 0"],
    },
    # Gloo returns wrong values; ringlab refuses (a ValueError, as for every
    # tensor it cannot take).
    "strided_slices": {
        # (rank 0 is broadcast's root: its column stays as it was, right.)
        "gloo": ["rank 0: all_reduce column: returned wrong values",
                 "rank 0: broadcast column: returned right values",
                 "rank 0: all_reduce rows[::2]: returned wrong values"] +
                [f"rank 1: {name}: returned wrong values" for name in SLICE_CASES] +
                ["rank 0: exit 0", "rank 1: exit 0"],
        "ringlab": [f"rank {rank}: {name}: raised ValueError" for rank in (0, 1)
                    for name in SLICE_CASES] + ["rank 0: exit 0", "rank 1: exit 0"],
    },
    # Gloo sums sparse tensors in all_reduce; ringlab refuses them, saying so.
    "sparse_tensors": {
        "gloo": [f"rank {rank}: {line}" for rank in (0, 1) for line in (
            "all_reduce sparse: returned [[0.0, 3.0], [4.0, 0.0]]",
            "broadcast sparse: raised RuntimeError")] + ["rank 0: exit 0", "rank 1: exit 0"],
        "ringlab": [f"rank {rank}: {line}" for rank in (0, 1) for line in (
            "all_reduce sparse: raised ValueError", "broadcast sparse: raised ValueError")] +
        ["rank 0: exit 0", "rank 1: exit 0"],
    },
}


# -- running ------------------------------------------------------------------------


def rank_main(rank, world, backend, port, name, out_dir, started, initialized):
    with open(os.path.join(out_dir, f"rank{rank}.txt"), "w") as out:
        r = Rank(rank, world, backend, out)
        try:
            import torch.distributed as dist
            if backend == "ringlab":
                import ringlab.torch  # noqa: F401
            # Every rank has imported torch before any starts its clock: a
            # case's short timeout then measures the case, not a loaded
            # machine's imports.
            started.wait(120)
            dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                    world_size=world,
                                    timeout=datetime.timedelta(seconds=CASES[name][2]))
            # Every rank is out of init_process_group before any runs its
            # case: in torch 1.13 rank 0 hosts the store, and a rank 0 whose
            # case ends at once (every call refused) would otherwise exit
            # while another rank is still in init's store-based barrier.
            initialized.wait(120)
            CASES[name][1](r)
        except Exception:  # noqa: BLE001 - said, and the case fails on it
            traceback.print_exc()
            r.say(f"failed: {traceback.format_exc().splitlines()[-1]}")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no teardown: a case may leave a group with a dead rank


def program(name, backend, out_dir):
    """Runs case `name` on every rank; prints their lines, rank by rank, and
    how each process ended."""
    import multiprocessing
    # torch imported once, here, and the ranks forked from this process: an
    # import costs a second of CPU, and 19 cases on two backends would pay
    # it on every rank. Nothing has started a thread yet (torch starts its
    # pools on first use; ringlab.torch is imported by each rank).
    import torch.distributed  # noqa: F401
    world = CASES[name][0]
    port = free_port()
    fork = multiprocessing.get_context("fork")
    started, initialized = fork.Barrier(world), fork.Barrier(world)
    procs = [fork.Process(target=rank_main,
                          args=(rank, world, backend, port, name, out_dir, started, initialized))
             for rank in range(world)]
    for p in procs:
        p.start()
    deadline = time.monotonic() + 150
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    for rank, p in enumerate(procs):
        path = os.path.join(out_dir, f"rank{rank}.txt")
        if os.path.exists(path):
            with open(path) as f:
                sys.stdout.write(f.read())
    for rank, p in enumerate(procs):
        code = p.exitcode
        print(f"rank {rank}: " + ("killed" if code == -signal.SIGKILL else f"exit {code}"))


def lines_of(name, backend):
    with tempfile.TemporaryDirectory(prefix=f"ringlab-dropin-{backend}-") as tmp:
        code, out, err = run([sys.executable, __file__, "--program", name, backend, tmp],
                             timeout=200)
    if code != 0:
        raise SystemExit(f"FAIL: {name} on {backend}: the program itself failed "
                         f"(exit {code})\n{out}\n{err}")
    print(f"--- {name} on {backend}:\n{out}--- its stderr:\n{err}")
    return out.splitlines()


def compare(name):
    gloo, ringlab = lines_of(name, "gloo"), lines_of(name, "ringlab")
    expected = EXPECTED.get(name)
    if expected is not None:
        if gloo != expected["gloo"]:
            raise SystemExit(f"FAIL: {name}: Gloo no longer does what this test says it "
                             f"does:\n{gloo}\nexpected\n{expected['gloo']}")
        want, what = expected["ringlab"], "the expected lines"
    else:
        want, what = gloo, "Gloo's"
        broken = [line for line in gloo + ringlab if ": failed: " in line]
        if broken:
            raise SystemExit(f"FAIL: {name}: the case itself failed:\n" + "\n".join(broken))
    if ringlab != want:
        diff = "\n".join(f"  ringlab {a!r}\n  wanted  {b!r}" for a, b in
                         zip(ringlab + [""] * len(want), want + [""] * len(ringlab)) if a != b)
        raise SystemExit(f"FAIL: {name}: ringlab's lines differ from {what}:\n{diff}")
    print(f"ok: {name}: ringlab printed {what} ({len(want)} lines)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--list"]:
        print("\n".join(CASES))
        sys.exit(0)
    require_torch()
    if sys.argv[1:2] == ["--program"]:
        program(*sys.argv[2:5])
        sys.exit(0)
    if sys.argv[1] not in CASES:
        raise SystemExit(f"no case {sys.argv[1]}: use one of {', '.join(CASES)}")
    compare(sys.argv[1])
