"""torch.distributed's backend "ringlab": ringlab's hand-written collectives
over ringlab's TCP transport, in place on the CPU tensors' own memory.

    import ringlab.torch
    dist.init_process_group("ringlab", rank=rank, world_size=size)

Every init_method works (env://, tcp://, file://, a store): the ranks meet
through the store torch hands the backend, then talk over connections of
their own. Choosing algorithms:

    RINGLAB_ALGORITHMS=all_reduce=ring,broadcast=binomial python3 prog.py
    dist.init_process_group("ringlab", pg_options=ringlab.torch.Options(
        algorithms={"all_reduce": "ring"}))

With RINGLAB_SHOW_ALGORITHMS=1 (or torch's TORCH_DISTRIBUTED_DEBUG=INFO),
rank 0 says on stderr which algorithm each collective ran and why.
RINGLAB_TRACE=DIR
writes a Perfetto trace of the default group to DIR/trace.json (each rank
writes DIR/rank<r>.json when the program ends, and the last one to write
merges them); under `ringlab run --trace FILE` the ranks' files go to the
launcher, which merges them into FILE. A DIR that cannot be written is
refused when the group is made. Each collective in the trace is a walkthrough
that `ringlab replay DIR/trace.json` prints step by step; a DDP model with
ddp_model.register_comm_hook(None, ringlab.torch.bucket_hook) names each
gradient bucket's ("bucket 0", ...). The variables (these, RINGLAB_TIMEOUT_MS,
RINGLAB_BIND_ADDR, RINGLAB_JOB_TOKEN) are read on the C++ side, as every
ringlab rank reads them.

Why the Work objects come from torch futures: C++ code inside torch (DDP's
constructor, its reducer) calls wait() on the Work a Python process group
returns after Python has dropped it, and a pybind11 trampoline cannot reach
a Python override whose object is gone: torch 1.13 then waits in
c10d::Work::wait for a completion nobody signals. A Work made by
_create_work_from_future lives in C++ whole. Collectives therefore finish
before they return (their futures are complete). isend/irecv finish later: a
thread per group completes them, and they return a Work written in Python
(_p2p._P2PWork), whose wait() raises their errors, which a future-made Work does
not on torch 1.13 (docs/pytorch.md).

A script that forgets `import ringlab.torch` gets torch's own
"Invalid backend: 'ringlab'": the import registers the backend.
"""

import atexit
import datetime
import inspect
import os
import sys
import weakref

import torch
import torch.distributed as dist

from . import _ringlab
from ._p2p import _ANY_SOURCE, _Progress
from ._tensors import _Staging

BACKEND_NAME = "ringlab"


class Options:
    """Backend options: dist.init_process_group("ringlab", pg_options=Options(...)).

    algorithms: {"all_reduce": "ring", ...}; wins over RINGLAB_ALGORITHMS.
    """

    def __init__(self, algorithms=None):
        self.algorithms = dict(algorithms or {})


def parse_algorithms(text, source="RINGLAB_ALGORITHMS"):
    """"all_reduce=ring,broadcast=binomial" -> {"all_reduce": "ring", ...}, checked."""
    choices = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        collective, _, algorithm = item.partition("=")
        choices[collective.strip()] = algorithm.strip()
    return check_algorithms(choices, source)


def check_algorithms(choices, source):
    known = _ringlab.collectives()
    for collective, algorithm in choices.items():
        if collective not in known:
            raise ValueError(f"{source}: '{collective}' is not a collective: use one of "
                             f"{', '.join(known)} (e.g. all_reduce=ring)")
        names = _ringlab.algorithm_names(collective)
        if algorithm not in names:
            raise ValueError(f"{source}: {collective} has no algorithm '{algorithm}': use one "
                             f"of {', '.join(names)}")
    return dict(choices)


class StoreAdapter:
    """The store torch hands the backend, as ringlab's rendezvous calls it
    (python/python_store.hpp): torch 1.13's stores have no check(), and a
    wait that times out raises a RuntimeError."""

    # compare_set(key, X, X) leaves a key alone and answers X only when the
    # key is absent (no value is X): check() for stores that lack it.
    _ABSENT = b"\0ringlab: no such key\0"

    def __init__(self, store):
        self._store = store

    def describe(self):
        return f"torch's {type(self._store).__name__}"

    def set(self, key, value):
        self._store.set(key, value)

    def get(self, key, timeout_ms):
        self.wait([key], timeout_ms)
        return self._store.get(key)

    def add(self, key, delta):
        return self._store.add(key, delta)

    def wait(self, keys, timeout_ms):
        try:
            self._store.wait(keys, datetime.timedelta(milliseconds=timeout_ms))
        except RuntimeError as error:
            if "timeout" in str(error).lower() or "timed out" in str(error).lower():
                raise TimeoutError(f"timed out after {timeout_ms} ms waiting for "
                                   f"{', '.join(keys)} ({error})") from error
            raise

    def check(self, keys):
        if hasattr(self._store, "check"):
            return self._store.check(keys)
        return all(self._store.compare_set(k, self._ABSENT, self._ABSENT) != self._ABSENT
                   for k in keys)

    def compare_set(self, key, expected, desired):
        return self._store.compare_set(key, expected, desired)

    def delete_key(self, key):
        return self._store.delete_key(key)

    def num_keys(self):
        return self._store.num_keys()


def _op_name(op):
    names = [("SUM", "sum"), ("PRODUCT", "product"), ("MIN", "min"), ("MAX", "max"),
             ("BAND", "band"), ("BOR", "bor"), ("BXOR", "bxor"), ("AVG", "avg")]
    for member, name in names:
        if hasattr(dist.ReduceOp, member) and op == getattr(dist.ReduceOp, member):
            return name
    raise ValueError(f"ringlab backend: reduce op {op} is not one ringlab has: use SUM, "
                     "PRODUCT, MIN, MAX, AVG, BAND, BOR or BXOR")


def _single(tensors, call):
    """The one tensor of a call. torch's *_multigpu functions pass a list,
    one tensor per GPU, which Gloo also takes on the CPU: all_reduce sums
    them all into each, broadcast copies the root's first into each, reduce
    refuses them. ringlab runs one tensor per process."""
    if len(tensors) != 1:
        raise ValueError(f"ringlab backend: {call} got {len(tensors)} tensors in one call (a "
                         "*_multigpu function): ringlab takes one tensor per process; call it "
                         "once per tensor, or add the tensors up first")
    return tensors


def _make_work_from_future():
    make = getattr(torch._C._distributed_c10d, "_create_work_from_future", None)
    if make is None:
        raise ImportError("ringlab.torch needs torch._C._distributed_c10d."
                          "_create_work_from_future (torch 1.13 and 2.x have it)")
    return make


_work_from_future = _make_work_from_future()


def _completed(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _work_from_future(future)


def _init_base(group, store, rank, size):
    try:
        dist.ProcessGroup.__init__(group, rank, size)
    except TypeError:  # a torch whose ProcessGroup takes the store too
        dist.ProcessGroup.__init__(group, store, rank, size)


_live_groups = weakref.WeakSet()
_first_group = True  # the first group of a process is the one traced


def _announce_asked():
    """Whether rank 0 says which algorithm each collective runs:
    RINGLAB_SHOW_ALGORITHMS=1, or torch's own TORCH_DISTRIBUTED_DEBUG=INFO or
    DETAIL."""
    mine = os.environ.get("RINGLAB_SHOW_ALGORITHMS", "")
    if mine not in ("", "0", "1"):
        raise ValueError(f"RINGLAB_SHOW_ALGORITHMS={mine}: use 1 (say which algorithm each "
                         "collective runs) or 0")
    torch_debug = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper()
    return mine == "1" or torch_debug in ("INFO", "DETAIL")


def _settings(options):
    """The Group's options from RINGLAB_ALGORITHMS and the backend's options;
    the first group of the process is the one its trace variables, if any,
    trace, and the one that may say the job is open (once per job: every
    process makes the default group first)."""
    global _first_group
    algorithms, sources = {}, {}
    text = os.environ.get("RINGLAB_ALGORITHMS", "")
    for collective, name in parse_algorithms(text).items():
        algorithms[collective], sources[collective] = name, "RINGLAB_ALGORITHMS"
    chosen = getattr(options, "algorithms", None) if options is not None else None
    for collective, name in check_algorithms(chosen or {}, "the backend's options").items():
        algorithms[collective], sources[collective] = name, "the backend's options"
    settings = {"algorithms": algorithms, "algorithm_sources": sources,
                "trace": _first_group, "first": _first_group, "announce": _announce_asked()}
    _first_group = False
    return settings


class ProcessGroupRinglab(dist.ProcessGroup):
    """A torch.distributed process group on ringlab's collectives."""

    def __init__(self, store, rank, size, timeout, options=None):
        _init_base(self, store, rank, size)
        timeout_ms = max(1, int(timeout.total_seconds() * 1000))
        self._group = _ringlab.Group(StoreAdapter(store), rank, size, timeout_ms,
                                     _settings(options))
        # RINGLAB_TIMEOUT_MS, when set, won over torch's timeout, as in ringlab's programs.
        self._progress = _Progress(self._group.timeout_ms, rank)
        _live_groups.add(self)

    def getBackendName(self):  # noqa: N802 - torch's name
        return BACKEND_NAME

    def finish(self):
        """Writes the trace, if any (also done when the program ends)."""
        line = self._group.finish()
        if line:
            print(line, file=sys.stderr, flush=True)

    # -- collectives: finished when they return --------------------------------

    def _each(self, tensors, what, run):
        """run(buf) for each tensor, then the copies written back."""
        staging = _Staging()
        bufs = staging.bufs(tensors, what)
        for buf in bufs:
            run(buf)
        staging.finish()
        return _completed(tensors)

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        return self._each(_single(tensors, "broadcast"), "broadcast's tensor",
                          lambda buf: self._group.broadcast(buf, root))

    def allreduce(self, tensors, opts=None):
        return self.allreduce_coalesced(_single(tensors, "all_reduce"), opts)

    def label_next_collective(self, label):
        """Names the next collective's walkthrough in the trace ("bucket 2");
        `ringlab replay` and `ringlab gui --trace` show it by that name."""
        self._group.label_next_collective(str(label))

    def allreduce_coalesced(self, tensors, opts=None):
        """Each tensor summed on its own, as Gloo's all_reduce_coalesced does."""
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        return self._each(tensors, "all_reduce's tensor",
                          lambda buf: self._group.all_reduce(buf, op))

    def reduce(self, tensors, opts=None):
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        root = opts.rootRank if opts is not None else 0
        return self._each(_single(tensors, "reduce"), "reduce's tensor",
                          lambda buf: self._group.reduce(buf, root, op))

    def allgather(self, output_tensors, input_tensors, opts=None):
        return self._allgather_lists(output_tensors, _single(input_tensors, "all_gather"))

    def _allgather_lists(self, output_tensors, input_tensors):
        """An all_gather of input_tensors[j] into output_tensors[j], for each j."""
        staging = _Staging()
        calls = [(staging.bufs(outputs, "all_gather's tensor_list", copies=True),
                  staging.buf(t, "all_gather's tensor", written=False, copies=True))
                 for outputs, t in zip(output_tensors, input_tensors)]
        for outputs, t in calls:
            self._group.all_gather(outputs, t)
        staging.finish()
        return _completed(output_tensors)

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        """output_lists[r][j] receives rank r's input_list[j] (Gloo's layout):
        one all_gather per input tensor."""
        size = self.size()
        if len(output_lists) != size:
            raise ValueError(f"ringlab backend: all_gather_coalesced's output_tensor_lists "
                             f"holds {len(output_lists)} lists and the group has {size} ranks: "
                             "pass one list per rank, each shaped like input_tensor_list")
        for rank, outputs in enumerate(output_lists):
            if len(outputs) != len(input_list):
                raise ValueError(f"ringlab backend: all_gather_coalesced's "
                                 f"output_tensor_lists[{rank}] holds {len(outputs)} tensors "
                                 f"and input_tensor_list {len(input_list)}: each output list "
                                 "takes one tensor per input tensor")
        per_input = [[outputs[j] for outputs in output_lists] for j in range(len(input_list))]
        self._allgather_lists(per_input, list(input_list))
        return _completed(output_lists)

    def _allgather_base(self, output, input, opts=None):  # noqa: A002 - torch's names
        size = self.size()
        if output.numel() != size * input.numel():
            raise ValueError(f"ringlab backend: all_gather_into_tensor's output holds "
                             f"{output.numel()} elements and its input {input.numel()}: the "
                             f"output takes the input of each of the group's {size} ranks, "
                             f"{size * input.numel()} elements")
        staging = _Staging()
        flat = staging.tensor(output, "all_gather_into_tensor's output", copies=True)
        blocks = list(flat.view(-1).chunk(size)) if flat.numel() else []
        self._group.all_gather(staging.bufs(blocks, "all_gather_into_tensor's output"),
                               staging.buf(input, "all_gather_into_tensor's input",
                                           written=False, copies=True))
        staging.finish()
        return _completed([output])

    def gather(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        outputs = output_tensors[0] if output_tensors else []
        staging = _Staging()
        mine = staging.buf(input_tensors[0], "gather's tensor", written=False)
        self._group.gather(mine, staging.bufs(outputs, "gather's gather_list", copies=True),
                           root)
        staging.finish()
        return _completed(output_tensors)

    def scatter(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        inputs = input_tensors[0] if input_tensors else []
        staging = _Staging()
        mine = staging.buf(output_tensors[0], "scatter's tensor")
        self._group.scatter(mine, staging.bufs(inputs, "scatter's scatter_list", written=False),
                            root)
        staging.finish()
        return _completed(output_tensors)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        staging = _Staging()
        calls = [(staging.buf(output, "reduce_scatter's output"),
                  staging.bufs(inputs, "reduce_scatter's input_list", written=False,
                               copies=True))
                 for output, inputs in zip(_single(output_tensors, "reduce_scatter"),
                                           input_tensors)]
        for output, inputs in calls:
            self._group.reduce_scatter(output, inputs, op)
        staging.finish()
        return _completed(output_tensors)

    def _reduce_scatter_base(self, output, input, opts=None):  # noqa: A002
        size = self.size()
        if input.numel() != size * output.numel():
            raise ValueError(f"ringlab backend: reduce_scatter_tensor's input holds "
                             f"{input.numel()} elements and its output {output.numel()}: the "
                             f"input holds a block for each of the group's {size} ranks, "
                             f"{size * output.numel()} elements")
        flat = _Staging().tensor(input, "reduce_scatter_tensor's input", written=False)
        blocks = list(flat.view(-1).chunk(size)) if flat.numel() else []
        return self.reduce_scatter([output], [blocks], opts)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        staging = _Staging()
        outputs = staging.bufs(output_tensors, "all_to_all's output_tensor_list", copies=True)
        inputs = staging.bufs(input_tensors, "all_to_all's input_tensor_list", written=False,
                              copies=True)
        self._group.all_to_all(outputs, inputs)
        staging.finish()
        return _completed(output_tensors)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes,  # noqa: A002
                      opts=None):
        def elements(tensor, splits):
            row = tensor[0].numel() if tensor.dim() > 0 and tensor.shape[0] > 0 else 1
            return [s * row for s in splits]
        staging = _Staging()
        out = staging.buf(output, "all_to_all_single's output")
        into = staging.buf(input, "all_to_all_single's input", written=False)
        self._group.all_to_all_single(out, into, elements(output, output_split_sizes),
                                      elements(input, input_split_sizes))
        staging.finish()
        return _completed([output])

    def barrier(self, opts=None):
        self._group.barrier()
        return _completed([])

    # -- point to point: finished by the group's progress thread ----------------

    def send(self, tensors, dst, tag=0):
        staging = _Staging()
        work = self._group.isend(staging.buf(tensors[0], "send's tensor", written=False),
                                 dst, tag)
        return self._progress.add(work, tensors, staging, f"send to rank {dst} (tag {tag})")

    def recv(self, tensors, src, tag=0):
        staging = _Staging()
        work = self._group.irecv(staging.buf(tensors[0], "recv's tensor"), src, tag)
        source = "any rank" if src == _ANY_SOURCE else f"rank {src}"
        return self._progress.add(work, tensors, staging,
                                  f"receive from {source} (tag {tag})")

    def recv_anysource(self, tensors, tag=0):
        """dist.recv(tensor) without src: the oldest message of this tag from
        any rank; the Work's _source_rank() says whose it was."""
        return self.recv(tensors, _ANY_SOURCE, tag)


def bucket_hook(state, bucket):
    """A DDP comm hook that does what DDP does without one (each gradient
    bucket divided by the world size, then all_reduce'd), and names each
    bucket's all_reduce in the trace "bucket K" (K: its index), so that
    `ringlab replay` shows one walkthrough per bucket, by name:

        ddp_model.register_comm_hook(None, ringlab.torch.bucket_hook)

    state: the process group (None: the default one)."""
    group = state if state is not None else dist.distributed_c10d._get_default_group()
    if isinstance(group, ProcessGroupRinglab):
        group.label_next_collective(f"bucket {bucket.index()}")
    tensor = bucket.buffer()
    tensor.div_(group.size())
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(
        lambda fut: fut.value()[0])


def _create(options, pg_options=None):
    """The backend's creator: torch passes _DistributedBackendOptions (extended API)."""
    return ProcessGroupRinglab(options.store, options.group_rank, options.group_size,
                               options.timeout, pg_options)


def _register():
    if BACKEND_NAME.upper() in dist.Backend._plugins:
        return
    parameters = inspect.signature(dist.Backend.register_backend).parameters
    if "devices" in parameters:  # torch 2.x: the devices the backend serves
        dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True, devices=["cpu"])
    else:
        dist.Backend.register_backend(BACKEND_NAME, _create, extended_api=True)


def _finish_all():
    for group in list(_live_groups):
        group._progress.stop()  # noqa: SLF001 - the module's own class
        try:
            group.finish()
        except Exception as error:  # noqa: BLE001 - the program is ending anyway
            print(f"ringlab: no trace written: {error}", file=sys.stderr, flush=True)


_register()
atexit.register(_finish_all)
