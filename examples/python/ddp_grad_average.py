"""Seed 002, part 2: DDP averages the gradient over processes: 14.0 on both ranks.

w = 1, loss = sum((w*x - 0)**2) over x = [2*rank, 2*rank + 1]: the local
gradients are 2.0 (rank 0) and 26.0 (rank 1); DDP all-reduces them and divides
by the world size, 2. (The article's program runs on two GPUs per process;
this one on the CPU, which is where ringlab's backend runs.)
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

import ringlab.torch  # noqa: F401  registers the backend "ringlab"


def run(rank, size):
    model = nn.Linear(in_features=1, out_features=1, bias=False)

    model.weight.data.zero_()
    model.weight.data.add_(1)

    model = torch.nn.parallel.DistributedDataParallel(model)

    x = torch.tensor([2*rank, 2*rank + 1], dtype=torch.float).view(-1, 1)

    y = model(x)

    label = torch.zeros(2, 1, dtype=torch.float)

    loss = torch.sum((y - label)**2)

    loss.backward()

    print(model.module.weight.grad.item())


def init_process(rank_id, size, fn, backend='ringlab'):
    """ Initialize the distributed environment. """
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', '29500')
    dist.init_process_group(backend, rank=rank_id, world_size=size)
    fn(rank_id, size)


if __name__ == "__main__":
    backend = sys.argv[1] if len(sys.argv) > 1 else 'ringlab'
    if "RANK" in os.environ:  # one rank of a job started by ringlab run or torchrun
        init_process(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), run, backend)
    else:
        size = 2
        processes = []
        mp.set_start_method("spawn")
        for rank in range(size):
            p = mp.Process(target=init_process, args=(rank, size, run, backend))
            p.start()
            processes.append(p)
        for p in processes:
            p.join()
