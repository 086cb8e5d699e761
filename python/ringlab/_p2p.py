"""The point-to-point half of the "ringlab" backend: the Work that
isend/irecv return and the thread that completes them (ringlab.torch)."""

import datetime
import threading
import time

import torch
import torch.distributed as dist

from . import _ringlab

_Work = getattr(dist, "Work", None) or torch._C._distributed_c10d.Work
_ANY_SOURCE = -1  # transport/transport.hpp's kAnySource


class _P2PWork(_Work):
    """A pending isend/irecv as torch's callers see it. wait() raises the
    operation's error: a Work from _create_work_from_future does not on torch
    1.13 (its wait() returns True whatever the future holds), which let
    dist.recv from a dead rank return with the buffer untouched. A Python
    Work is safe here, where it was not for collectives (ringlab.torch's
    docstring): torch's send/recv/isend/irecv and batch_isend_irecv hand it to
    Python callers, which hold it while they wait. The group's progress thread
    settles it by the operation's deadline, so wait() returns or raises."""

    def __init__(self, future):
        super().__init__()
        self._future = future
        self._settled = threading.Event()
        self._error = None
        self._source = -1

    def _settle(self, error, source):
        self._error, self._source = error, source
        self._settled.set()

    def wait(self, timeout=None):
        seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else 0
        if not self._settled.wait(seconds if seconds > 0 else None):
            raise RuntimeError(f"ringlab backend: the operation did not finish within "
                               f"{seconds} s (Work.wait's timeout)")
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self):
        return self._settled.is_set()

    def is_success(self):
        return self._settled.is_set() and self._error is None

    def exception(self):
        return self._error

    def get_future(self):
        return self._future

    def result(self):
        """The operation's tensors, once it finished (raises its error)."""
        self.wait()
        return self._future.value()

    def _source_rank(self):
        self.wait()
        return self._source

    def source_rank(self):
        return self._source_rank()


def _as_runtime_error(error):
    """torch's callers catch RuntimeError (Gloo's every failure is one):
    ringlab's errors all are; anything else is wrapped, its message kept."""
    if isinstance(error, RuntimeError):
        return error
    wrapped = RuntimeError(f"ringlab backend: {error}")
    wrapped.__cause__ = error
    return wrapped


class _Progress:
    """Completes one group's isend/irecv. A thread started at the first one
    polls them: is_completed() moves the transport one step without
    blocking, so a receive waiting for a message that comes only after a
    later send never holds up that send's completion."""

    def __init__(self, timeout_ms, rank):
        self._timeout_ms = timeout_ms
        self._timeout_s = timeout_ms / 1000.0
        self._rank = rank
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

    def add(self, work, tensors, staging, what):
        """tensors: the operation's; their storages are kept too until it
        finishes (_storages), and staging's copies, which a receive copies
        back into a tensor that is not contiguous when it completes. what:
        the operation, for its timeout's message ("receive from rank 1 (tag
        0)")."""
        result = _P2PWork(torch.futures.Future())
        late = (f"ringlab backend: rank {self._rank} timed out after {self._timeout_ms} ms "
                f"(the group's timeout) waiting to {what}: is the other rank alive, and does "
                "it run the matching send or receive with the same tag?")
        item = (work, result, tensors, staging, _storages(tensors),
                time.monotonic() + self._timeout_s, late)
        with self._changed:
            self._pending.append(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ringlab-p2p",
                                                daemon=True)
                self._thread.start()
            self._changed.notify()
        return result

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
    def _settle(work, result, tensors, staging, storages, deadline, late):  # noqa: ARG004
        """True once the result has its outcome."""
        try:
            if not work.is_completed():
                if time.monotonic() < deadline:
                    return False
                try:
                    work.wait(1)  # a transport's error that came meanwhile wins
                except _ringlab.TimeoutError:
                    raise _ringlab.TimeoutError(late) from None
            work.wait(1)  # raises the operation's error, if any
            staging.finish()
        except Exception as error:  # noqa: BLE001 - handed to whoever waits
            # The future first: once wait() returns, get_future() and
            # result() must find it complete.
            error = _as_runtime_error(error)
            result.get_future().set_exception(error)
            result._settle(error, -1)  # noqa: SLF001 - the module's own class
            return True
        result.get_future().set_result(tensors)
        result._settle(None, work.source_rank())  # noqa: SLF001
        return True


def _storages(tensors):
    """The storages under the tensors. A pending isend or irecv reads or
    writes a tensor's memory after it returns, and a caller may drop that
    memory while the tensor object lives on (tensor.set_(), tensor.data =
    ...): the send then read freed memory and the receive wrote into another
    tensor's (Gloo does the same). Holding the storage keeps the memory."""
    take = "untyped_storage" if hasattr(torch.Tensor, "untyped_storage") else "_storage"
    return [getattr(t, take)() for t in tensors]
