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

Rank 0 says on stderr which algorithm each collective ran. RINGLAB_TRACE=DIR
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
before they return (their futures are complete); isend/irecv finish later,
and a thread per group completes their futures (docs/pytorch.md).
"""

import atexit
import datetime
import inspect
import os
import sys
import threading
import time
import weakref

import torch
import torch.distributed as dist

from . import _ringlab

BACKEND_NAME = "ringlab"

# Every dtype ringlab's collectives carry (ops/dtype.hpp), by torch's name:
# Gloo's seven and bool, int16 and bfloat16, which torch 1.13's Gloo refuses.
_DTYPES = {dtype: str(dtype).replace("torch.", "") for dtype in (
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64)}


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


def _buf(tensor, what):
    """(address, elements, dtype) of a tensor ringlab can work on in place."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"ringlab backend: {what} is a {type(tensor).__name__}, not a tensor")
    if tensor.device.type != "cpu":
        raise ValueError(f"ringlab backend: {what} is on {tensor.device}: ringlab's "
                         "collectives run on the CPU; move it there with .cpu()")
    if tensor.dtype not in _DTYPES:
        raise TypeError(f"ringlab backend: {what} holds {tensor.dtype}, which ringlab's "
                        f"collectives do not carry: they take {', '.join(_DTYPES.values())}; "
                        "convert the tensor (tensor.to(torch.float32), say; a complex one as "
                        "torch.view_as_real(tensor))")
    if not tensor.is_contiguous():
        raise ValueError(f"ringlab backend: {what} is not contiguous: ringlab works in place on "
                         "a tensor's memory, so pass a contiguous one (tensor.contiguous(), and "
                         "copy the result back)")
    return (tensor.data_ptr(), tensor.numel(), _DTYPES[tensor.dtype])


def _bufs(tensors, what):
    return [_buf(t, f"{what}[{i}]") for i, t in enumerate(tensors)]


def _op_name(op):
    names = [("SUM", "sum"), ("PRODUCT", "product"), ("MIN", "min"), ("MAX", "max"),
             ("BAND", "band"), ("BOR", "bor"), ("BXOR", "bxor"), ("AVG", "avg")]
    for member, name in names:
        if hasattr(dist.ReduceOp, member) and op == getattr(dist.ReduceOp, member):
            return name
    raise ValueError(f"ringlab backend: reduce op {op} is not one ringlab has: use SUM, "
                     "PRODUCT, MIN, MAX, AVG, BAND, BOR or BXOR")


def _make_work_from_future():
    make = getattr(torch._C._distributed_c10d, "_create_work_from_future", None)
    if make is None:
        raise ImportError("ringlab.torch needs torch._C._distributed_c10d."
                          "_create_work_from_future (torch 1.13 and 2.x have it)")
    return make


_work_from_future = _make_work_from_future()


class _P2PWork(torch._C._distributed_c10d.Work):
    """An isend's or irecv's Work: wait() raises the operation's error. The
    Work torch 1.13 makes from a future returns True from wait() whatever the
    future holds, so a receive that failed (another size, another dtype, a
    peer gone) looked done, its tensor untouched. Only Python waits on these
    (dist.send, recv, isend, irecv, batch_isend_irecv keep the object), so a
    Python override is reached, unlike the collectives' (see the top)."""

    def __init__(self, future):
        super().__init__()
        self._future = future

    def wait(self, timeout=None):  # noqa: ARG002 - the progress thread's limit applies
        self._future.wait()  # raises what the progress thread set
        return True

    def is_completed(self):
        return self._future.done()

    def get_future(self):
        return self._future


def _completed(result):
    future = torch.futures.Future()
    future.set_result(result)
    return _work_from_future(future)


class _Progress:
    """Completes the futures of one group's isend/irecv. A thread started at
    the first one polls them: is_completed() moves the transport one step
    without blocking, so a receive waiting for a message that comes only
    after a later send never holds up that send's future."""

    def __init__(self, timeout_ms):
        self._timeout_s = timeout_ms / 1000.0
        self._pending = []
        self._changed = threading.Condition()
        self._thread = None
        self._stopping = False

    def stop(self):
        """Ends the thread, at the program's end (atexit, while the
        interpreter is whole). A daemon thread still inside a call that let
        go of the GIL when the interpreter finalizes is ended by CPython with
        pthread_exit on its way back, which unwinds through pybind11's
        noexcept GIL guard: std::terminate, SIGABRT, after the program's
        work was done (2 runs in 16 of torchrun_python)."""
        with self._changed:
            self._stopping = True
            self._changed.notify()
            thread = self._thread
        if thread is not None:
            thread.join(min(self._timeout_s, 10.0))

    def add(self, work, tensors):
        """tensors: the operation's; their storages are kept too until it
        finishes (_storages)."""
        future = torch.futures.Future()
        item = (work, future, tensors, _storages(tensors), time.monotonic() + self._timeout_s)
        with self._changed:
            self._pending.append(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ringlab-p2p",
                                                daemon=True)
                self._thread.start()
            self._changed.notify()
        return _P2PWork(future)

    def _run(self):
        pause = 0.0001
        while True:
            with self._changed:
                while not self._pending and not self._stopping:
                    self._changed.wait()
                if self._stopping:
                    return
                pending = list(self._pending)
            finished = [item for item in pending if self._settle(*item)]
            with self._changed:
                for item in finished:
                    self._pending.remove(item)
            pause = 0.0001 if finished else min(pause * 2, 0.002)
            if not finished:
                time.sleep(pause)

    @staticmethod
    def _settle(work, future, tensors, storages, deadline):  # noqa: ARG004 - kept alive
        """True once the future has its result or its error."""
        try:
            if not work.is_completed():
                if time.monotonic() < deadline:
                    return False
                work.wait(1)  # raises the transport's timeout error, naming the ranks
            work.wait(1)  # raises the operation's error, if any
        except Exception as error:  # noqa: BLE001 - handed to whoever waits
            future.set_exception(error)
            return True
        future.set_result(tensors)
        return True


def _storages(tensors):
    """The storages under the tensors. A pending isend or irecv reads or
    writes a tensor's memory after it returns, and a caller may drop that
    memory while the tensor object lives on (tensor.set_(), tensor.data =
    ...): the send then read freed memory and the receive wrote into another
    tensor's (Gloo does the same). Holding the storage keeps the memory."""
    take = "untyped_storage" if hasattr(torch.Tensor, "untyped_storage") else "_storage"
    return [getattr(t, take)() for t in tensors]


def _init_base(group, store, rank, size):
    try:
        dist.ProcessGroup.__init__(group, rank, size)
    except TypeError:  # a torch whose ProcessGroup takes the store too
        dist.ProcessGroup.__init__(group, store, rank, size)


_live_groups = weakref.WeakSet()
_traced = False  # the first group of a process is the one traced


def _settings(options):
    """The Group's options from RINGLAB_ALGORITHMS and the backend's options;
    the first group of the process is the one its trace variables, if any,
    trace."""
    global _traced
    algorithms, sources = {}, {}
    text = os.environ.get("RINGLAB_ALGORITHMS", "")
    for collective, name in parse_algorithms(text).items():
        algorithms[collective], sources[collective] = name, "RINGLAB_ALGORITHMS"
    chosen = getattr(options, "algorithms", None) if options is not None else None
    for collective, name in check_algorithms(chosen or {}, "the backend's options").items():
        algorithms[collective], sources[collective] = name, "the backend's options"
    settings = {"algorithms": algorithms, "algorithm_sources": sources, "trace": not _traced}
    _traced = True
    return settings


class ProcessGroupRinglab(dist.ProcessGroup):
    """A torch.distributed process group on ringlab's collectives."""

    def __init__(self, store, rank, size, timeout, options=None):
        _init_base(self, store, rank, size)
        timeout_ms = max(1, int(timeout.total_seconds() * 1000))
        self._group = _ringlab.Group(StoreAdapter(store), rank, size, timeout_ms,
                                     _settings(options))
        # RINGLAB_TIMEOUT_MS, when set, won over torch's timeout, as in ringlab's programs.
        self._progress = _Progress(self._group.timeout_ms)
        _live_groups.add(self)

    def getBackendName(self):  # noqa: N802 - torch's name
        return BACKEND_NAME

    def finish(self):
        """Writes the trace, if any (also done when the program ends)."""
        line = self._group.finish()
        if line:
            print(line, file=sys.stderr, flush=True)

    # -- collectives: finished when they return --------------------------------

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        for t in tensors:
            self._group.broadcast(_buf(t, "broadcast's tensor"), root)
        return _completed(tensors)

    def allreduce(self, tensors, opts=None):
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        for t in tensors:
            self._group.all_reduce(_buf(t, "all_reduce's tensor"), op)
        return _completed(tensors)

    def label_next_collective(self, label):
        """Names the next collective's walkthrough in the trace ("bucket 2");
        `ringlab replay` and `ringlab gui --trace` show it by that name."""
        self._group.label_next_collective(str(label))

    def allreduce_coalesced(self, tensors, opts=None):
        return self.allreduce(tensors, opts)

    def reduce(self, tensors, opts=None):
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        root = opts.rootRank if opts is not None else 0
        for t in tensors:
            self._group.reduce(_buf(t, "reduce's tensor"), root, op)
        return _completed(tensors)

    def allgather(self, output_tensors, input_tensors, opts=None):
        for outputs, t in zip(output_tensors, input_tensors):
            self._group.all_gather(_bufs(outputs, "all_gather's tensor_list"),
                                   _buf(t, "all_gather's tensor"))
        return _completed(output_tensors)

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        return self.allgather(output_lists, input_list, opts)

    def _allgather_base(self, output, input, opts=None):  # noqa: A002 - torch's names
        blocks = list(output.view(-1).chunk(self.size())) if output.numel() else []
        self._group.all_gather(_bufs(blocks, "all_gather_into_tensor's output"),
                               _buf(input, "all_gather_into_tensor's input"))
        return _completed([output])

    def gather(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        outputs = output_tensors[0] if output_tensors else []
        self._group.gather(_buf(input_tensors[0], "gather's tensor"),
                           _bufs(outputs, "gather's gather_list"), root)
        return _completed(output_tensors)

    def scatter(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        inputs = input_tensors[0] if input_tensors else []
        self._group.scatter(_buf(output_tensors[0], "scatter's tensor"),
                            _bufs(inputs, "scatter's scatter_list"), root)
        return _completed(output_tensors)

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = _op_name(opts.reduceOp if opts is not None else dist.ReduceOp.SUM)
        for output, inputs in zip(output_tensors, input_tensors):
            self._group.reduce_scatter(_buf(output, "reduce_scatter's output"),
                                       _bufs(inputs, "reduce_scatter's input_list"), op)
        return _completed(output_tensors)

    def _reduce_scatter_base(self, output, input, opts=None):  # noqa: A002
        blocks = list(input.view(-1).chunk(self.size())) if input.numel() else []
        return self.reduce_scatter([output], [blocks], opts)

    def alltoall(self, output_tensors, input_tensors, opts=None):
        self._group.all_to_all(_bufs(output_tensors, "all_to_all's output_tensor_list"),
                               _bufs(input_tensors, "all_to_all's input_tensor_list"))
        return _completed(output_tensors)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes,  # noqa: A002
                      opts=None):
        def elements(tensor, splits):
            row = tensor[0].numel() if tensor.dim() > 0 and tensor.shape[0] > 0 else 1
            return [s * row for s in splits]
        self._group.all_to_all_single(_buf(output, "all_to_all_single's output"),
                                      _buf(input, "all_to_all_single's input"),
                                      elements(output, output_split_sizes),
                                      elements(input, input_split_sizes))
        return _completed([output])

    def barrier(self, opts=None):
        self._group.barrier()
        return _completed([])

    # -- point to point: finished by the group's progress thread ----------------

    def send(self, tensors, dst, tag=0):
        work = self._group.isend(_buf(tensors[0], "send's tensor"), dst, tag)
        return self._progress.add(work, tensors)

    def recv(self, tensors, src, tag=0):
        work = self._group.irecv(_buf(tensors[0], "recv's tensor"), src, tag)
        return self._progress.add(work, tensors)

    def recv_anysource(self, tensors, tag=0):
        raise ValueError("ringlab backend: recv needs a src: ringlab's transport matches a "
                         "message by its source and tag; pass src=")


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
