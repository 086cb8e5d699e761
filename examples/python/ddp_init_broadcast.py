"""Seed 002, part 1: DDP broadcasts rank 0's weights when it wraps the model.

The weights start at 0.0 on rank 0 and 1.0 on rank 1; after
DistributedDataParallel(model) both are 0.0. (The article's program runs on
GPUs; this one on the CPU, which is where ringlab's backend runs.)
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
    model.weight.data.fill_(float(rank))
    print('at rank {}, before init, the weight is {}'.format(rank, model.weight.item()))
    model = torch.nn.parallel.DistributedDataParallel(model)
    print('at rank {}, after init, the weight is {}'.format(rank, model.module.weight.item()))


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
