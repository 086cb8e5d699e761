"""What the Python tests share: skipping without torch, ports, running
programs with a deadline, and the article's rule for comparing outputs."""

import importlib.util
import os
import re
import socket
import subprocess
import sys

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def require_torch():
    """Exits 77 (skipped) with the reason when this interpreter has no torch.
    It looks for the package without importing it: a test that only starts
    programs would pay torch's import (a second of CPU) for nothing, and one
    that uses torch imports it anyway."""
    if importlib.util.find_spec("torch") is None:
        print(f"SKIP: {sys.executable} has no torch; "
              "apt-get install python3-torch (tools/deps.sh does)")
        sys.exit(SKIP)


def torch_version():
    """(major, minor) of the installed torch, read without importing it."""
    import importlib.metadata
    major, minor = importlib.metadata.version("torch").split(".")[:2]
    return int(major), int(minor)


def require_names(names, what):
    """Exits 77 (skipped) with the reason when one of the host names does not
    resolve here (a machine whose /etc/hosts lacks them, such as a bare
    chroot): `what` is the program that uses them."""
    for name in names:
        try:
            socket.getaddrinfo(name, None)
        except socket.gaierror as error:
            print(f"SKIP: the host name {name} does not resolve on this machine ({error}), "
                  f"and {what} uses it; add it to /etc/hosts (127.0.0.1 {name})")
            sys.exit(SKIP)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_with(**variables):
    """This process's environment without a launcher's or ringlab's settings,
    plus `variables`. Python's output is left buffered (PYTHONUNBUFFERED
    would let ranks' print()s mix within a line)."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    env.update({k: str(v) for k, v in variables.items()})
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_USE_AGENT_STORE",
                 "RINGLAB_ALGORITHMS", "RINGLAB_TRACE", "RINGLAB_TRACE_DIR"):
        if name not in variables:
            env.pop(name, None)
    return env


def run(command, env=None, timeout=120, cwd=None):
    """Runs command; returns (exit code, stdout, stderr). A command that runs
    past the timeout is killed and fails the test with what it printed."""
    try:
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as late:
        raise AssertionError(f"{' '.join(map(str, command))} ran past {timeout} s:\n"
                             f"stdout:\n{late.stdout}\nstderr:\n{late.stderr}") from None
    return done.returncode, done.stdout, done.stderr


def canonical(text):
    """/work/shared/reference/article-outputs.md's canonical form: runs of
    white space collapsed; a line with 'Rank <n>' belongs to rank n, phase 0
    if it starts with 'before', else 1; a line without a rank follows the
    rank-0 line before it and takes its phase; stable sort by (phase, rank,
    order within the rank)."""
    keyed = []
    last_rank0_phase = 0
    for order, raw in enumerate(text.splitlines()):
        line = " ".join(raw.split())
        if not line:
            continue
        match = re.search(r"Rank (\d+)", line)
        if match:
            rank = int(match.group(1))
            phase = 0 if line.startswith("before") else 1
            if rank == 0:
                last_rank0_phase = phase
        else:
            rank, phase = 0, last_rank0_phase
        keyed.append(((phase, rank, order), line))
    return [line for _, line in sorted(keyed)]
