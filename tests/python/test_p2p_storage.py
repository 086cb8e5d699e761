"""isend/irecv whose tensor's storage the caller lets go before they finish
(issue 33): the backend must keep the storage, not only the tensor object,
until the transfer is over. Before, a pending send read freed memory (the
receiver got whatever the allocator put there next) and a pending receive
wrote into memory that belonged to another tensor by then. Gloo does the
same; ringlab should not.

Two ranks (mp.spawn, init_method tcp://). Each case lets go of the storage
with `tensor.set_()` (the tensor object lives on, with new, empty storage)
and at once allocates tensors of the same size filled with -5, which take
the freed memory where the allocator hands it out again:

  send:    rank 0 isends 4 Mi float64 0, 1, 2, ... (far more than the
           sockets hold, so most of it is still in rank 0's memory); rank 1
           receives only after rank 0 let go: it must get 0, 1, 2, ...
  receive: rank 1 irecvs 8 Ki float64 and lets go; only then does rank 0
           send 7s: the fresh tensors must still hold -5 everywhere.
The freed memory's address is never handed out again while the transfer is
pending (checked through data_ptr()), so the case does not depend on luck
once the storage is kept.

    test_p2p_storage.py      (PYTHONPATH holds the built package)
"""

import gc
import sys
import traceback

from common import free_port, require_torch

BIG = 4 << 20     # float64 elements: 32 MiB, far more than the sockets hold
SMALL = 8 << 10   # float64 elements: 64 KiB
PATIENCE = 60     # seconds a rank waits for the other's signal


def let_go_and_reuse(tensor, n, copies):
    """Drops tensor's storage (tensor.set_()) and allocates `copies` tensors
    of n float64 filled with -5; returns them and whether one of them took
    the address the storage had."""
    import torch
    address = tensor.data_ptr()
    tensor.set_()
    gc.collect()
    fresh = [torch.full((n,), -5.0, dtype=torch.float64) for _ in range(copies)]
    return fresh, any(t.data_ptr() == address for t in fresh)


def wait_for(signal, what):
    if not signal.wait(PATIENCE):
        raise AssertionError(f"no signal from the other rank within {PATIENCE} s: {what}")


def send_case(rank, let_go):
    """Rank 1 reads nothing from rank 0 until rank 0 has let go of the
    tensor it is sending (`let_go`, a multiprocessing Event, not a message:
    a message would queue behind the send)."""
    import torch
    import torch.distributed as dist
    if rank == 0:
        data = torch.arange(BIG, dtype=torch.float64)
        work = dist.isend(data, dst=1, tag=1)
        fresh, reused = let_go_and_reuse(data, BIG, 2)
        let_go.set()
        work.wait()
        if reused:
            raise AssertionError("send: the pending send's storage was freed and handed out again")
        if any(not torch.all(t == -5.0) for t in fresh):
            raise AssertionError("send: a fresh tensor changed")
    else:
        wait_for(let_go, "rank 0 let go of the tensor it sends")
        got = torch.zeros(BIG, dtype=torch.float64)
        dist.recv(got, src=0, tag=1)
        expected = torch.arange(BIG, dtype=torch.float64)
        if not torch.equal(got, expected):
            wrong = int((got != expected).sum())
            raise AssertionError(f"send: rank 1 received {wrong} wrong elements of {BIG} "
                                 f"(the last {got[-2:].tolist()}): the send read freed memory")


def receive_case(rank, let_go):
    import torch
    import torch.distributed as dist
    if rank == 1:
        target = torch.zeros(SMALL, dtype=torch.float64)
        work = dist.irecv(target, src=0, tag=3)
        fresh, reused = let_go_and_reuse(target, SMALL, 8)
        let_go.set()
        work.wait()
        changed = [i for i, t in enumerate(fresh) if not torch.all(t == -5.0)]
        if changed or reused:
            raise AssertionError(f"receive: the pending receive's storage was freed (its address "
                                 f"handed out again: {reused}; fresh tensors it wrote into: "
                                 f"{changed})")
    else:
        wait_for(let_go, "rank 1 let go of the tensor it receives into")
        dist.send(torch.full((SMALL,), 7.0, dtype=torch.float64), dst=1, tag=3)


def worker(rank, port, sent_let_go, received_let_go):
    import torch.distributed as dist
    import ringlab.torch  # noqa: F401
    try:
        dist.init_process_group("ringlab", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=2)
        send_case(rank, sent_let_go)
        receive_case(rank, received_let_go)
        dist.barrier()
    except BaseException:
        traceback.print_exc()
        raise


if __name__ == "__main__":
    require_torch()
    import torch.multiprocessing as mp
    context = mp.get_context("spawn")
    mp.spawn(worker, args=(free_port(), context.Event(), context.Event()), nprocs=2, join=True)
    print("isend and irecv keep their storage until they finish")
    sys.exit(0)
