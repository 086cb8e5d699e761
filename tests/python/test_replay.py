"""`ringlab replay` of PyTorch programs on the backend "ringlab", traced with
RINGLAB_TRACE=DIR:
  - the article's all_reduce program (examples/python/all_reduce.py, 4 ranks
    by mp.Process) replays exactly as `ringlab sim` prints the same
    collective, with the algorithm rank 0 says it ran;
  - a DDP model whose gradients fall in several buckets, with
    ringlab.torch.bucket_hook: one walkthrough per bucket's all_reduce,
    named "bucket K", each of the size torch's own GradBucket had.
    test_replay.py RINGLAB EXAMPLES_DIR
"""
import os
import re
import sys
import tempfile

from common import env_with, free_port, require_torch, run

RINGLAB, EXAMPLES = sys.argv[1:3]
DDP_WORLD = 2


def check(condition, what, details=""):
    if not condition:
        print(details)
        raise SystemExit(f"FAIL: {what}")


def from_first_message(text, stop=None):
    start = text.find("before the first message")
    if start < 0:
        return ""
    end = text.find(stop, start) if stop else -1
    return text[start:end] if end >= 0 else text[start:]


def article_all_reduce():
    with tempfile.TemporaryDirectory(prefix="ringlab-replay-") as tmp:
        trace_dir = os.path.join(tmp, "trace")
        code, out, err = run([sys.executable, os.path.join(EXAMPLES, "all_reduce.py")],
                             # RINGLAB_SHOW_ALGORITHMS: the line naming the algorithm
                             env_with(RINGLAB_TRACE=trace_dir, MASTER_PORT=free_port(),
                                      RINGLAB_SHOW_ALGORITHMS=1),
                             timeout=300)  # 4 processes importing torch, on shared cores
        details = f"--- stdout\n{out}--- stderr\n{err}"
        check(code == 0, "all_reduce.py on ringlab with RINGLAB_TRACE", details)
        said = re.search(r"ringlab: all_reduce runs (\w+) ", err)
        check(said is not None, "rank 0 says which algorithm all_reduce ran", details)
        algorithm = said.group(1)
        trace = os.path.join(trace_dir, "trace.json")
        code, listing, lerr = run([RINGLAB, "replay", trace, "--list"], env_with())
        check(code == 0, "replay --list", listing + lerr)
        found = re.search(r"^\s+(\d+)  all_reduce #\d+: all_reduce, algorithm " + algorithm +
                          r", 4 ranks, 2 x int64 per rank", listing, re.M)
        check(found is not None, "the trace holds the article's all_reduce", listing)
        code, replay, rerr = run([RINGLAB, "replay", trace, "--walkthrough", found.group(1)],
                                 env_with())
        check(code == 0, "replay", replay + rerr)
        # The article's data: rank r holds [2r + 1, 2r + 2], as the simulator's.
        code, sim, serr = run([RINGLAB, "sim", "all_reduce", "--algo", algorithm, "--ranks", "4",
                               "--count", "2", "--dtype", "int64"], env_with())
        check(code == 0, "sim", sim + serr)
        simulated = from_first_message(sim, "\nprediction:")
        check(simulated != "" and from_first_message(replay) == simulated,
              "the replay of all_reduce.py prints what ringlab sim prints",
              f"--- replay\n{replay}--- sim\n{sim}")
        check("tensor([16, 20])" in replay, "every rank ends with the sum", replay)


def ddp_worker(rank, init_file, sizes_file):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import ringlab.torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("ringlab", init_method=f"file://{init_file}", rank=rank,
                            world_size=DDP_WORLD)
    torch.manual_seed(42)
    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 5))
    # Buckets of at most 400 bytes: the 165 gradients (660 bytes) in several
    # (find_unused_parameters: from the first pass on; the first bucket up to
    # _DEFAULT_FIRST_BUCKET_BYTES, else 1 MiB).
    dist._DEFAULT_FIRST_BUCKET_BYTES = 400
    ddp = DDP(model, bucket_cap_mb=400 / 2**20, find_unused_parameters=True)
    calls = []

    def hook(state, bucket):
        calls.append((bucket.index(), bucket.buffer().numel()))
        return ringlab.torch.bucket_hook(state, bucket)

    ddp.register_comm_hook(None, hook)
    for _ in range(2):
        ddp(torch.randn(20, 10) + rank).sum().backward()
    if rank == 0:
        with open(sizes_file, "w") as f:
            f.write(" ".join(f"{k}:{n}" for k, n in calls))
    dist.destroy_process_group()


def ddp_buckets():
    with tempfile.TemporaryDirectory(prefix="ringlab-replay-ddp-") as tmp:
        trace_dir = os.path.join(tmp, "trace")
        sizes_file = os.path.join(tmp, "sizes")
        code, out, err = run([sys.executable, __file__, RINGLAB, EXAMPLES, "--ddp-worker",
                              os.path.join(tmp, "init"), sizes_file],
                             env_with(RINGLAB_TRACE=trace_dir), timeout=300)
        details = f"--- stdout\n{out}--- stderr\n{err}"
        check(code == 0, "the DDP world of 2 failed", details)
        with open(sizes_file) as f:
            calls = [tuple(map(int, pair.split(":"))) for pair in f.read().split()]
        check(len(calls) >= 3, f"the model's gradients should fall in several buckets: {calls}")
        trace = os.path.join(trace_dir, "trace.json")
        code, listing, lerr = run([RINGLAB, "replay", trace, "--list"], env_with())
        check(code == 0, "replay --list", listing + lerr)
        # Every all_reduce of the trace, in order, is a bucket's, named by its
        # index, of the size torch's GradBucket had.
        found = re.findall(r"^\s+\d+  (.*): all_reduce, algorithm \w+, " + str(DDP_WORLD) +
                           r" ranks, (\d+) x float32 per rank", listing, re.M)
        check(found == [(f"bucket {k}", str(n)) for k, n in calls],
              f"one walkthrough per bucket's all_reduce, named by bucket: {calls}", listing)
        code, replay, rerr = run([RINGLAB, "replay", trace, "--walkthrough", "bucket 1"],
                                 env_with())
        # A name picks every walkthrough of that name: bucket 1 of each pass.
        ones = sum(1 for k, _ in calls if k == 1)
        check(code == 0 and replay.count("before the first message (step 0):") == ones and
              "\nafter step 1:\n" in replay,
              f"replay --walkthrough 'bucket 1' steps through its {ones} all_reduce",
              replay + rerr)


if __name__ == "__main__":
    require_torch()
    if len(sys.argv) > 3 and sys.argv[3] == "--ddp-worker":
        import torch.multiprocessing as mp
        mp.spawn(ddp_worker, args=(sys.argv[4], sys.argv[5]), nprocs=DDP_WORLD, join=True)
        sys.exit(0)
    article_all_reduce()
    ddp_buckets()
    print("ok")
