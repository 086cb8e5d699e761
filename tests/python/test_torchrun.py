"""ringlab's ranks in real torchrun jobs (torch 1.13's, from Debian).

    test_torchrun.py RINGLAB EXAMPLES_DIR CASE

CASE:
  agent4      torchrun --nproc_per_node 4 --master_port P --no_python ringlab lesson all_reduce
              (static rendezvous: torchrun's agent hosts the c10d TCPStore on P and sets
              TORCHELASTIC_USE_AGENT_STORE=True; a ringlab rank that tried to host a store
              there would find the port taken)
  agent2      the same with --nproc_per_node 2: the lesson takes the job's world
  standalone  torchrun --standalone --nproc_per_node 4: torch 1.13 lets rank 0 host the store
  mismatch    --nproc_per_node 2 and lesson ... -n 4: an error naming both sizes
  bench       ringlab bench under torchrun: the job's world, no -n
  python      examples/python/p2p.py on the ringlab backend under torchrun
torch 1.13's torchrun takes --nproc_per_node (not --nproc-per-node, which 2.x added).
Debian's torch 1.13 on Python 3.11 cannot run torchrun with its default
--redirects 0 --tee 0 (Std.from_str finds no member for 0 or 3, as Python 3.11
iterates only a Flag's single-bit members): every run here passes
--redirects 2 --tee 1 (stdout to the console and a file, stderr to a file) and
reads the ranks' stdout and stderr from --log_dir.
"""

import glob
import os
import socket
import sys
import tempfile

from common import canonical, env_with, free_port, require_names, require_torch, run

RINGLAB, EXAMPLES, CASE = sys.argv[1:4]

INPUT = ["tensor([1, 2])", "tensor([3, 4])", "tensor([5, 6])", "tensor([7, 8])"]


def all_reduce_lines(world):
    """The all_reduce lesson's canonical lines on `world` ranks (closed form:
    every rank ends with the sum of [1 + 2r, 2 + 2r])."""
    total = [sum(1 + 2 * r for r in range(world)), sum(2 + 2 * r for r in range(world))]
    return ([f"before reudce Rank {r} has data {INPUT[r]}" for r in range(world)] +
            [f"after reudce Rank {r} has data tensor([{total[0]}, {total[1]}])"
             for r in range(world)])


def rank_logs(logs, name):
    """Every rank's NAME (stdout.log, stderr.log) under torchrun's --log_dir,
    by attempt and local rank, joined."""
    def order(path):
        parts = path.split(os.sep)
        return parts[-3], int(parts[-2])
    text = ""
    for log in sorted(glob.glob(os.path.join(logs, "*", "attempt_*", "*", name)), key=order):
        with open(log) as f:
            text += f.read()
    return text


def torchrun(*args, timeout=180):
    """(exit code, every rank's stdout, torchrun's stderr and then every
    rank's). Each rank's stdout is read from its own file, not from the
    console that --tee copies it to: torchrun starts Python programs with -u,
    so a print() of several values is several writes, and the console copy
    once had another rank's line spliced into the middle of one (in a fresh
    Debian chroot)."""
    with tempfile.TemporaryDirectory(prefix="ringlab-torchrun-") as logs:
        command = [sys.executable, "-m", "torch.distributed.run", "--redirects", "2", "--tee",
                   "1", "--log_dir", logs, *args]
        code, _, err = run(command, env_with(), timeout=timeout)
        return code, rank_logs(logs, "stdout.log"), err + rank_logs(logs, "stderr.log")


def static(world, *program):
    return torchrun("--nnodes", "1", "--nproc_per_node", str(world), "--master_port",
                    str(free_port()), *program)


def expect(code, out, err, lines, why):
    got = canonical(out)
    if code != 0 or got != lines:
        print(f"--- stdout\n{out}--- stderr\n{err}--- expected\n" + "\n".join(lines))
        raise SystemExit(f"FAIL: {why}")


def open_job_said_once(err):
    if err.count("this job is open") != 1:
        print(err)
        raise SystemExit("FAIL: rank 0 should say once that the job runs open")


def main():
    require_torch()
    lesson = ["--no_python", RINGLAB, "lesson", "all_reduce"]
    if CASE in ("agent4", "agent2"):
        world = 4 if CASE == "agent4" else 2
        code, out, err = static(world, *lesson)
        expect(code, out, err, all_reduce_lines(world),
               f"ringlab lesson all_reduce under torchrun's agent store on {world} ranks")
        open_job_said_once(err)
    elif CASE == "standalone":
        require_names(["localhost", socket.getfqdn()],
                      "torchrun --standalone (its store is localhost:29400, and its ranks "
                      "reach each other at this machine's name)")
        code, out, err = torchrun("--standalone", "--nproc_per_node", "4", *lesson)
        expect(code, out, err, all_reduce_lines(4), "ringlab lesson all_reduce, --standalone")
    elif CASE == "mismatch":
        code, out, err = static(2, *lesson, "-n", "4")
        if code == 0 or "of a world of 2" not in err or "asked to run 4 ranks" not in err:
            print(f"--- stdout\n{out}--- stderr\n{err}")
            raise SystemExit("FAIL: -n 4 in a job of 2 must fail, naming both")
    elif CASE == "bench":
        code, out, err = static(2, "--no_python", RINGLAB, "bench", "--op", "all_reduce",
                                "--sizes", "4K:4K", "--warmup", "1", "--iters", "2")
        rows = [line.split() for line in out.splitlines() if line.strip().startswith("4096")]
        # nccl-tests' columns; the last one counts wrong elements.
        if code != 0 or len(rows) != 1 or rows[0][-1] != "0" or ", 2 ranks, backend tcp" not in out:
            print(f"--- stdout\n{out}--- stderr\n{err}")
            raise SystemExit("FAIL: ringlab bench under torchrun with 2 ranks")
        print(out)
    elif CASE == "python":
        code, out, err = static(2, f"{EXAMPLES}/p2p.py", "ringlab")
        expect(code, out, err, ["after send, Rank 0 has data tensor(1.)",
                                "after recv, Rank 0 has data tensor(2.)",
                                "after recv, Rank 1 has data tensor(1.)",
                                "after send, Rank 1 has data tensor(2.)"],
               "examples/python/p2p.py on ringlab under torchrun")
    else:
        raise SystemExit(f"unknown case {CASE}")
    print(f"--- {CASE}: ok\n{out}")


if __name__ == "__main__":
    main()
