"""Seed 001: ping-pong between two ranks with the blocking send and recv."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import ringlab.torch  # noqa: F401  registers the backend "ringlab"


def run(rank_id, size):
    tensor = torch.zeros(1)
    if rank_id == 0:
        tensor += 1
        # Send the tensor to process 1
        dist.send(tensor=tensor, dst=1)
        print('after send, Rank ', rank_id, ' has data ', tensor[0])
        dist.recv(tensor=tensor, src=1)
        print('after recv, Rank ', rank_id, ' has data ', tensor[0])
    else:
        # Receive tensor from process 0
        dist.recv(tensor=tensor, src=0)
        print('after recv, Rank ', rank_id, ' has data ', tensor[0])
        tensor += 1
        dist.send(tensor=tensor, dst=0)
        print('after send, Rank ', rank_id, ' has data ', tensor[0])


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
