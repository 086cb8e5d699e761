"""One program of examples/python/, run three ways in one test:

  1. on gloo, started by its own mp.spawn / mp.Process code;
  2. on ringlab, the same way;
  3. on ringlab, as the ranks of `ringlab run --nproc-per-node N` (for the
     programs in LAUNCHED: the launch is the same whichever collective the
     program calls, and each run costs every rank an import of torch).

What the three print is compared: the article's rule for interleaved lines
(common.canonical), and numbers (DDP's losses) to 1e-6 relative. Where the
article printed the program's output (seed 001, seed 002) that output must
come out too; where torch 1.13's Gloo has no such collective (reduce_scatter,
all_to_all) the expected lines are the closed form below, and Gloo's own
refusal is checked instead.

    test_examples.py RINGLAB EXAMPLES_DIR NAME
"""

import os
import re
import sys
import tempfile

from common import canonical, env_with, free_port, require_torch, run, torch_version

RINGLAB, EXAMPLES, NAME = sys.argv[1:4]


def article(*lines):
    return list(lines)


def tensor(values):
    """torch's repr of a 1-D int64 tensor: elements right-aligned to the widest."""
    width = max(len(str(v)) for v in values)
    return "tensor([" + ", ".join(str(v).rjust(width) for v in values) + "])"


def ranks(template, world=4):
    return [template.format(r=r) for r in range(world)]


INPUT = ["tensor([1, 2])", "tensor([3, 4])", "tensor([5, 6])", "tensor([7, 8])"]
LIST = "[tensor([1, 2]), tensor([3, 4]), tensor([5, 6]), tensor([7, 8])]"

# Canonical lines (common.canonical) each program must print: the article's
# printouts (/work/shared/reference/article-outputs.md), else closed forms.
EXPECTED = {
    "p2p": article("after send, Rank 0 has data tensor(1.)", "after recv, Rank 0 has data tensor(2.)",
                   "after recv, Rank 1 has data tensor(1.)", "after send, Rank 1 has data tensor(2.)"),
    "broadcast": [f"before broadcast Rank {r} has data {INPUT[r]}" for r in range(4)] +
                 ranks("after broadcast Rank {r} has data tensor([1, 2])"),
    "scatter": ["before scatter Rank 0 has data tensor([1, 2])",
                "scater list: [tensor([0, 0]), tensor([1, 1]), tensor([2, 2]), tensor([3, 3])]"] +
               [f"before scatter Rank {r} has data {INPUT[r]}" for r in range(1, 4)] +
               ranks("after scatter Rank {r} has data tensor([{r}, {r}])"),
    "gather": [f"before gather Rank {r} has data {INPUT[r]}" for r in range(4)] +
              ["after gather Rank 0 has data tensor([1, 2])", f"gather_list: {LIST}"] +
              [f"after gather Rank {r} has data {INPUT[r]}" for r in range(1, 4)],
    "reduce": [f"before reudce Rank {r} has data {INPUT[r]}" for r in range(4)] +
              ["after reudce Rank 0 has data tensor([16, 20])",
               "after reudce Rank 1 has data tensor([15, 18])",
               "after reudce Rank 2 has data tensor([12, 14])",
               "after reudce Rank 3 has data tensor([16, 20])"],
    "all_gather": [f"before gather Rank {r} has data {INPUT[r]}" for r in range(4)] +
                  [line for r in range(4) for line in
                   (f"after gather Rank {r} has data {INPUT[r]}",
                    f"after gather Rank {r} has gather list {LIST}")],
    "all_reduce": [f"before reudce Rank {r} has data {INPUT[r]}" for r in range(4)] +
                  ranks("after reudce Rank {r} has data tensor([16, 20])"),
    # Rank j ends with the sum over ranks of entry j: (j + 1) * [16, 20].
    "reduce_scatter": [f"before reduce_scatter Rank {r} has input list [" +
                       ", ".join(tensor([(1 + 2 * r) * (j + 1), (2 + 2 * r) * (j + 1)])
                                 for j in range(4)) + "]" for r in range(4)] +
                      [f"after reduce_scatter Rank {j} has data "
                       f"{tensor([16 * (j + 1), 20 * (j + 1)])}" for j in range(4)],
    # A transpose: rank r receives 10*j + r from rank j.
    "all_to_all": [f"before all_to_all Rank {r} has input list [" +
                   ", ".join(f"tensor([{10 * r + j}])" for j in range(4)) + "]" for r in range(4)] +
                  [f"after all_to_all Rank {r} has output list [" +
                   ", ".join(f"tensor([{10 * j + r}])" for j in range(4)) + "]" for r in range(4)],
    "barrier": ranks("before barrier Rank {r} is waiting") + ranks("after barrier Rank {r} passed"),
    "ddp_init_broadcast": ["at rank 0, before init, the weight is 0.0",
                           "at rank 1, before init, the weight is 1.0",
                           "at rank 0, after init, the weight is 0.0",
                           "at rank 1, after init, the weight is 0.0"],
    "ddp_grad_average": ["14.0", "14.0"],
}
WORLD = {"p2p": 2, "ddp_init_broadcast": 2, "ddp_grad_average": 2, "ddp_tutorial": 2}
# What torch 1.13's Gloo says for the collectives it lacks (a newer torch's
# Gloo may have them: then its output is compared like the others').
GLOO_LACKS = {"reduce_scatter": "does not support reduce_scatter",
              "all_to_all": "does not support alltoall"}
# The programs also run under `ringlab run`: a point-to-point one, a
# collective one and the DDP ones (env:// with the launcher's variables).
LAUNCHED = {"p2p", "all_reduce", "ddp_init_broadcast", "ddp_grad_average", "ddp_tutorial"}


def sorted_lines(text):
    """For outputs without ranks in the article's form (DDP's): sorted lines."""
    return sorted(" ".join(line.split()) for line in text.splitlines() if line.strip())


def numbers_agree(a, b):
    """Same lines, their numbers equal to 1e-6 relative."""
    if len(a) != len(b):
        return False
    number = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
    for x, y in zip(a, b):
        if re.sub(number, "#", x) != re.sub(number, "#", y):
            return False
        for u, v in zip(re.findall(number, x), re.findall(number, y)):
            if abs(float(u) - float(v)) > 1e-6 * max(abs(float(u)), abs(float(v)), 1e-30):
                return False
    return True


def program(*args):
    return [sys.executable, os.path.join(EXAMPLES, f"{NAME}.py"), *args]


def spawned(backend, tmp):
    # MASTER_ADDR by number: ddp_tutorial's default is the name localhost,
    # which a machine without /etc/hosts cannot resolve.
    code, out, err = run(program(backend),
                         env_with(MASTER_ADDR="127.0.0.1", MASTER_PORT=free_port(), TMPDIR=tmp),
                         timeout=180)
    return code, out, err


def under_ringlab_run(tmp, *args):
    world = WORLD.get(NAME, 4)
    command = [RINGLAB, "run", "--nproc-per-node", str(world), "--"] + program("ringlab", *args)
    return run(command, env_with(TMPDIR=tmp), timeout=180)


def gloo_output(tmp):
    """Gloo's stdout, None where torch 1.13's Gloo lacks the collective (the
    closed form stands in; a newer torch's Gloo is run and, if it refuses,
    must refuse as 1.13's does)."""
    if NAME in GLOO_LACKS and torch_version() == (1, 13):
        return None
    gloo_code, gloo, gloo_err = spawned("gloo", tmp)
    if gloo_code == 0 and "Traceback" not in gloo_err:
        return gloo
    if NAME in GLOO_LACKS and GLOO_LACKS[NAME] in gloo_err:
        return None
    raise AssertionError(f"gloo failed ({gloo_code}):\n{gloo}\n{gloo_err}")


def launched_output(tmp):
    """(stdout, stderr) of the program's ranks under `ringlab run`."""
    if NAME not in LAUNCHED:
        return None, ""
    if NAME == "ddp_tutorial":
        launched = ""
        for demo in ("demo_basic", "demo_checkpoint"):
            run_code, out, run_err = under_ringlab_run(tmp, demo)
            if run_code != 0:
                raise AssertionError(f"ringlab run failed ({run_code}):\n{out}\n{run_err}")
            launched += out
    else:
        run_code, launched, run_err = under_ringlab_run(tmp)
        if run_code != 0:
            raise AssertionError(f"ringlab run failed ({run_code}):\n{launched}\n{run_err}")
    return launched, run_err


def outputs(tmp):
    """(gloo, ringlab spawned, ringlab run) stdout, checking each run went
    well; gloo's and ringlab run's are None where not run."""
    gloo = gloo_output(tmp)
    code, mine, err = spawned("ringlab", tmp)
    if code != 0 or "Traceback" in err:
        raise AssertionError(f"ringlab under mp.spawn failed ({code}):\n{mine}\n{err}")
    launched, run_err = launched_output(tmp)
    said = err + run_err
    if NAME != "p2p" and ("ringlab: " not in said or " runs " not in said):
        raise AssertionError(f"ringlab did not say which algorithm ran:\n{err}\n{run_err}")
    return gloo, mine, launched


def main():
    require_torch()
    with tempfile.TemporaryDirectory(prefix=f"ringlab-example-{NAME}-") as tmp:
        gloo, mine, launched = outputs(tmp)
    runs = {"gloo (mp.spawn)": gloo, "ringlab (mp.spawn)": mine, "ringlab (ringlab run)": launched}
    runs = {name: out for name, out in runs.items() if out is not None}
    if NAME in EXPECTED and NAME not in ("ddp_init_broadcast", "ddp_grad_average"):
        want = EXPECTED[NAME]
        views = {name: canonical(out) for name, out in runs.items()}
        compare = lambda got: got == want  # noqa: E731
    else:
        want = EXPECTED.get(NAME) and sorted(EXPECTED[NAME])
        want = want or sorted_lines(gloo)
        views = {name: sorted_lines(out) for name, out in runs.items()}
        compare = lambda got: numbers_agree(got, want)  # noqa: E731
    wrong = [name for name, got in views.items() if not compare(got)]
    for name, got in views.items():
        print(f"--- {name}{' (WRONG)' if name in wrong else ''}")
        print("\n".join(got))
    if wrong:
        print(f"--- expected\n" + "\n".join(want))
        sys.exit(1)
    print(f"--- {NAME}: all {len(views)} runs print the same")


if __name__ == "__main__":
    main()
