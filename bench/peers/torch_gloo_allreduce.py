# Peer for `ringlab bench --op all_reduce` on a machine with PyTorch (e.g. a
# 16-core machine): real Gloo all_reduce on float32 tensors, median over iters
# after warm-up, busbw as nccl-tests. A copy of the team's shared script
# (bench/gloo_16core.sh runs it) with one addition: the sizes may be given.
#
# Usage: python3 torch_gloo_allreduce.py RANKS PORT [ITERS] [MIN:MAX]
#   MIN:MAX (e.g. 4K:64M) doubles from MIN to MAX, as `ringlab bench --sizes`;
#   without it: 4K, 64K, 1M, 16M and 64M.
# Each row: "gloo n=RANKS  BYTES B  TIME us  busbw X GB/s". A run's time is the
# slowest rank's time of one all_reduce after a barrier; the row's time is the
# median over ITERS runs.
import os, sys, time, statistics, torch, torch.distributed as dist, torch.multiprocessing as mp

SIZES = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20]

def parse_size(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale

def doubling(text):
    low, high = (parse_size(t) for t in text.split(":"))
    sizes = []
    while low <= high:
        sizes.append(low)
        low *= 2
    return sizes

def work(rank, world, port, iters, sizes):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for nbytes in sizes:
        t = torch.ones(nbytes // 4)
        for _ in range(3): dist.all_reduce(t)
        times = []
        for _ in range(iters):
            dist.barrier(); t0 = time.perf_counter(); dist.all_reduce(t); times.append(time.perf_counter() - t0)
        med = torch.tensor(times); dist.all_reduce(med, op=dist.ReduceOp.MAX)
        m = statistics.median(med.tolist())
        if rank == 0:
            print(f"gloo n={world} {nbytes:>10} B  {m*1e6:10.1f} us  busbw {2*(world-1)/world*nbytes/m/1e9:7.3f} GB/s", flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    world = int(sys.argv[1]); port = int(sys.argv[2]); iters = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    sizes = doubling(sys.argv[4]) if len(sys.argv) > 4 else SIZES
    mp.spawn(work, args=(world, port, iters, sizes), nprocs=world)
