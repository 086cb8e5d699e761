#!/usr/bin/python3
"""Runs seed 001's programs (the articles' ping-pong, its isend/irecv form,
broadcast, scatter, gather, reduce, all_gather, all_reduce) in real PyTorch
with their tensors in each dtype, and writes what they print as golden files
for `ringlab lesson NAME --dtype D` (tests/test_lessons_dtype.cpp):

  lessons_dtype/<lesson>.<dtype>.txt   rank 0's lines, then rank 1's, ...

The programs are the articles' (examples/python/), with dtype=torch.int64
(and the ping-pong's torch.zeros(1), the scatter list's torch.tensor([r, r]),
the gather lists' torch.zeros(2, dtype=torch.int64)) made dtype=D. They run
on Gloo, as the articles' do, for the dtypes Gloo takes (uint8, int8, int32,
int64, float16, float32, float64). torch 1.13's Gloo refuses int16 and
bfloat16 ("Invalid scalar type"), so for those the same program moves its
tensors in float64 through Gloo and prints them converted with .to(D): every
value is a small integer, which int16 and bfloat16 hold exactly, so this is
what a backend that carries D prints. bool is left out: the programs cannot
make their tensors in bool (torch.arange(2, dtype=torch.bool) raises
"arange_cpu" not implemented for 'Bool', and the ping-pong's tensor += 1
"result type Long can't be cast to the desired output type Bool").

    /usr/bin/python3 tests/golden/make_lesson_dtype_golden.py
"""
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "lessons_dtype")
DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
CARRIED = {"int16", "bfloat16"}  # through Gloo as float64, printed in the dtype
LESSONS = {"pingpong": 2, "pingpong_async": 2, "broadcast": 4, "scatter": 4, "gather": 4,
           "reduce": 4, "all_gather": 4, "all_reduce": 4}


def programs(torch, dist, D, show):
    """The articles' run() functions with dtype D; show() is what print sees."""

    def pingpong(rank_id, size):
        tensor = torch.zeros(1, dtype=D)
        if rank_id == 0:
            tensor += 1
            dist.send(tensor=tensor, dst=1)
            print('after send, Rank ', rank_id, ' has data ', show(tensor[0]))
            dist.recv(tensor=tensor, src=1)
            print('after recv, Rank ', rank_id, ' has data ', show(tensor[0]))
        else:
            dist.recv(tensor=tensor, src=0)
            print('after recv, Rank ', rank_id, ' has data ', show(tensor[0]))
            tensor += 1
            dist.send(tensor=tensor, dst=0)
            print('after send, Rank ', rank_id, ' has data ', show(tensor[0]))

    def pingpong_async(rank_id, size):
        tensor = torch.zeros(1, dtype=D)
        if rank_id == 0:
            tensor += 1
            req = dist.isend(tensor=tensor, dst=1)
            req.wait()
            print('after send, Rank ', rank_id, ' has data ', show(tensor[0]))
            req = dist.irecv(tensor=tensor, src=1)
            req.wait()
            print('after recv, Rank ', rank_id, ' has data ', show(tensor[0]))
        else:
            req = dist.irecv(tensor=tensor, src=0)
            req.wait()
            print('after recv, Rank ', rank_id, ' has data ', show(tensor[0]))
            tensor += 1
            req = dist.isend(tensor=tensor, dst=0)
            req.wait()
            print('after send, Rank ', rank_id, ' has data ', show(tensor[0]))

    def broadcast(rank_id, size):
        tensor = torch.arange(2, dtype=D) + 1 + 2 * rank_id
        print('before broadcast', ' Rank ', rank_id, ' has data ', show(tensor))
        dist.broadcast(tensor, src=0)
        print('after broadcast', ' Rank ', rank_id, ' has data ', show(tensor))

    def scatter(rank_id, size):
        tensor = torch.arange(2, dtype=D) + 1 + 2 * rank_id
        print('before scatter', ' Rank ', rank_id, ' has data ', show(tensor))
        if rank_id == 0:
            scatter_list = [torch.tensor([0, 0], dtype=D), torch.tensor([1, 1], dtype=D),
                            torch.tensor([2, 2], dtype=D), torch.tensor([3, 3], dtype=D)]
            print('scater list:', [show(t) for t in scatter_list])
            dist.scatter(tensor, src=0, scatter_list=scatter_list)
        else:
            dist.scatter(tensor, src=0)
        print('after scatter', ' Rank ', rank_id, ' has data ', show(tensor))

    def gather(rank_id, size):
        tensor = torch.arange(2, dtype=D) + 1 + 2 * rank_id
        print('before gather', ' Rank ', rank_id, ' has data ', show(tensor))
        if rank_id == 0:
            gather_list = [torch.zeros(2, dtype=D) for _ in range(4)]
            dist.gather(tensor, dst=0, gather_list=gather_list)
            print('after gather', ' Rank ', rank_id, ' has data ', show(tensor))
            print('gather_list:', [show(t) for t in gather_list])
        else:
            dist.gather(tensor, dst=0)
            print('after gather', ' Rank ', rank_id, ' has data ', show(tensor))

    def reduce(rank_id, size):
        tensor = torch.arange(2, dtype=D) + 1 + 2 * rank_id
        print('before reudce', ' Rank ', rank_id, ' has data ', show(tensor))
        dist.reduce(tensor, dst=3, op=dist.ReduceOp.SUM,)
        print('after reudce', ' Rank ', rank_id, ' has data ', show(tensor))

    def all_gather(rank_id, size):
        tensor = torch.arange(2, dtype=D) + 1 + 2 * rank_id
        print('before gather', ' Rank ', rank_id, ' has data ', show(tensor))
        gather_list = [torch.zeros(2, dtype=D) for _ in range(4)]
        dist.all_gather(gather_list, tensor)
        print('after gather', ' Rank ', rank_id, ' has data ', show(tensor))
        print('after gather', ' Rank ', rank_id, ' has gather list ',
              [show(t) for t in gather_list])

    def all_reduce(rank_id, size):
        tensor = torch.arange(2, dtype=D) + 1 + 2 * rank_id
        print('before reudce', ' Rank ', rank_id, ' has data ', show(tensor))
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        print('after reudce', ' Rank ', rank_id, ' has data ', show(tensor))

    return locals()


def rank_main(rank_id, size, lesson, port, folder):
    """One rank of one program's world: the program once per dtype, each
    run's prints in a file of this rank's (lines of different ranks never
    mix, whatever the buffering)."""
    import contextlib
    import torch
    import torch.distributed as dist
    os.environ['MASTER_ADDR'] = '127.0.0.1'
    os.environ['MASTER_PORT'] = str(port)
    dist.init_process_group('gloo', rank=rank_id, world_size=size)
    for dtype in DTYPES:
        printed = getattr(torch, dtype)
        carrier = torch.float64 if dtype in CARRIED else printed
        show = (lambda t, d=printed: t.to(d)) if dtype in CARRIED else (lambda t: t)
        with open(os.path.join(folder, f"{dtype}.rank{rank_id}"), "w") as out, \
                contextlib.redirect_stdout(out):
            programs(torch, dist, carrier, show)[lesson](rank_id, size)
        dist.barrier()


def run_program(lesson, port, folder):
    """One program on its world of processes (as the articles start them)."""
    import torch.multiprocessing as mp
    mp.set_start_method("spawn")
    size = LESSONS[lesson]
    ranks = [mp.Process(target=rank_main, args=(r, size, lesson, port, folder))
             for r in range(size)]
    for p in ranks:
        p.start()
    for p in ranks:
        p.join()
    return 0 if all(p.exitcode == 0 for p in ranks) else 1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--run":
        return run_program(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    os.makedirs(OUT, exist_ok=True)
    for lesson, size in LESSONS.items():
        with tempfile.TemporaryDirectory() as folder:
            run = subprocess.run([sys.executable, __file__, "--run", lesson, str(free_port()),
                                  folder], capture_output=True, text=True, timeout=900)
            if run.returncode != 0:
                sys.exit(f"{lesson} failed:\n{run.stderr}")
            for dtype in DTYPES:
                lines = ""
                for rank in range(size):
                    with open(os.path.join(folder, f"{dtype}.rank{rank}")) as rank_file:
                        lines += rank_file.read()
                with open(os.path.join(OUT, f"{lesson}.{dtype}.txt"), "w") as out:
                    out.write(lines)
                print("wrote", f"lessons_dtype/{lesson}.{dtype}.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
