"""The `ringlab` backend's settings, on one world of 2 processes (mp.spawn,
init_method file://):
  - RINGLAB_ALGORITHMS chooses the default group's algorithms, backend
    options (pg_options) a group's own; rank 0 says which algorithm ran;
  - RINGLAB_TRACE=DIR writes each rank's trace and the last rank's merge of
    them, DIR/trace.json: a lane per rank and an arrow (flow) per message;
  - a RINGLAB_TRACE=DIR that cannot be written is refused when the group is
    made, and the job fails, naming it;
  - a wrong RINGLAB_ALGORITHMS is refused before any rank starts, naming the
    choices.
Then `ringlab run --trace FILE` over a Python program: the launcher merges the
ranks' files into FILE.

    test_features.py RINGLAB EXAMPLES_DIR
"""

import json
import os
import sys
import tempfile

from common import env_with, require_torch, run

RINGLAB, EXAMPLES = sys.argv[1:3]
WORLD = 2


def worker(rank, init_file):
    import torch
    import torch.distributed as dist
    import ringlab.torch
    dist.init_process_group("ringlab", init_method=f"file://{init_file}", rank=rank,
                            world_size=WORLD)
    t = torch.ones(4)
    dist.all_reduce(t)
    dist.broadcast(t, src=1)
    assert t.tolist() == [2.0] * 4, t
    options = ringlab.torch.Options(algorithms={"all_reduce": "recursive_doubling"})
    group = dist.new_group(backend="ringlab", pg_options=options)
    dist.all_reduce(t, group=group)
    assert t.tolist() == [4.0] * 4, t
    dist.destroy_process_group()


def lanes_and_flows(trace_file):
    with open(trace_file) as f:
        events = json.load(f)["traceEvents"]
    lanes = {e["tid"] for e in events if e.get("ph") in ("X", "B", "E")}
    flows = [e for e in events if e.get("ph") in ("s", "f")]
    return lanes, flows


def check(condition, what, details=""):
    if not condition:
        print(details)
        raise SystemExit(f"FAIL: {what}")


def settings_and_trace():
    with tempfile.TemporaryDirectory(prefix="ringlab-features-") as tmp:
        trace_dir = os.path.join(tmp, "trace")
        code, out, err = run([sys.executable, __file__, RINGLAB, EXAMPLES, "--worker",
                              os.path.join(tmp, "init")],
                             env_with(RINGLAB_ALGORITHMS="all_reduce=ring,broadcast=chain",
                                      RINGLAB_TRACE=trace_dir), timeout=120)
        details = f"--- stdout\n{out}--- stderr\n{err}"
        check(code == 0, "the world of 2 failed", details)
        for line in ("ringlab: all_reduce runs ring (RINGLAB_ALGORITHMS)",
                     "ringlab: broadcast runs chain (RINGLAB_ALGORITHMS)",
                     "ringlab: all_reduce runs recursive_doubling (the backend's options)"):
            check(err.count(line) == 1, f"rank 0 should say once: {line}", details)
        # One rank merges (the last to write its file), and says so once.
        check(err.count(f"written to {trace_dir}/trace.json") == 1,
              "one line about the merged trace", details)
        lanes, flows = lanes_and_flows(os.path.join(trace_dir, "trace.json"))
        check(len(lanes) >= WORLD and len(flows) >= 2,
              f"trace.json should hold a lane per rank and arrows: lanes {lanes}, "
              f"{len(flows)} flow events")
        print(err)


def unwritable_trace_refused():
    with tempfile.TemporaryDirectory(prefix="ringlab-features-") as tmp:
        blocker = os.path.join(tmp, "a-file")
        with open(blocker, "w"):
            pass
        trace_dir = os.path.join(blocker, "trace")  # a folder inside a file: never
        code, out, err = run([sys.executable, __file__, RINGLAB, EXAMPLES, "--worker",
                              os.path.join(tmp, "init")],
                             env_with(RINGLAB_TRACE=trace_dir), timeout=120)
        check(code != 0 and f"RINGLAB_TRACE={trace_dir}: cannot make that folder" in err,
              "RINGLAB_TRACE where nothing can be written must fail the job, naming it",
              f"--- exit {code}\n--- stdout\n{out}--- stderr\n{err}")
        check("written to" not in err, "no trace can have been written", err)


def wrong_algorithm_refused():
    code, out, err = run([sys.executable, "-c", "import ringlab.torch as r; "
                          "r.parse_algorithms('all_reduce=nope')"], env_with(), timeout=60)
    check(code != 0 and "all_reduce has no algorithm 'nope': use one of ring" in err,
          "RINGLAB_ALGORITHMS=all_reduce=nope must be refused, naming the algorithms", err)


def under_ringlab_run_trace():
    with tempfile.TemporaryDirectory(prefix="ringlab-run-trace-") as tmp:
        output = os.path.join(tmp, "run.json")
        code, out, err = run([RINGLAB, "run", "--nproc-per-node", "4", "--trace", output, "--",
                              sys.executable, os.path.join(EXAMPLES, "all_reduce.py")],
                             env_with(), timeout=120)
        check(code == 0 and os.path.exists(output), "ringlab run --trace over Python",
              f"--- stdout\n{out}--- stderr\n{err}")
        lanes, flows = lanes_and_flows(output)
        check(len(lanes) >= 4 and flows, f"the launcher's trace: lanes {lanes}, "
              f"{len(flows)} flow events")
        print(err)


if __name__ == "__main__":
    require_torch()
    if len(sys.argv) > 3 and sys.argv[3] == "--worker":
        import torch.multiprocessing as mp
        mp.spawn(worker, args=(sys.argv[4],), nprocs=WORLD, join=True)
        sys.exit(0)
    wrong_algorithm_refused()
    unwritable_trace_refused()
    settings_and_trace()
    under_ringlab_run_trace()
    print("ok")
