"""dist.all_to_all in seed 001's style (Gloo has none in torch 1.13). Entry j
of rank r's input_list, tensor([10*r + j]), goes to rank j: a transpose."""
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import ringlab.torch  # noqa: F401  registers the backend "ringlab"


def run(rank_id, size):
    input_list = [torch.tensor([10 * rank_id + j]) for j in range(size)]
    output_list = [torch.zeros(1, dtype=torch.int64) for _ in range(size)]
    print('before all_to_all',' Rank ', rank_id, ' has input list ', input_list)
    dist.all_to_all(output_list, input_list)
    print('after all_to_all',' Rank ', rank_id, ' has output list ', output_list)


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
        size = 4
        processes = []
        mp.set_start_method("spawn")
        for rank in range(size):
            p = mp.Process(target=init_process, args=(rank, size, run, backend))
            p.start()
            processes.append(p)
        for p in processes:
            p.join()
