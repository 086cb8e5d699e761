"""The two sides of tests/netns_store_steering.sh: a job without a token
whose store anyone can write (torch's TCPStore), and a stranger on another
host that writes rank 0's address in it.

    store_steering.py agent PORT SECONDS
        hosts a torch TCPStore on PORT for SECONDS, as torchrun's agent does
        (on every interface): for C++ ranks started with
        TORCHELASTIC_USE_AGENT_STORE=True, and for the victims below.
    store_steering.py victim RANK PORT DELAY
        one rank of a 2-rank job on the backend "ringlab" (no
        RINGLAB_JOB_TOKEN), meeting in the agent's store on PORT; it joins
        the group DELAY seconds after it starts (ranks start at different
        times); each all_reduces [rank + 1] * 4 and prints "rank R:
        all_reduce [...]" (every element is 3.0 when only the job's ranks
        take part).
      store_steering.py stranger HOST PORT PREFIX OWN_ADDRESS SECONDS [DTYPE]
        the attacker: a client of the store at HOST:PORT (keys under PREFIX,
        as the job's ranks see them) that runs a real ringlab rank 0 of world
        2 (listening on its own loopback), publishes OWN_ADDRESS:F as rank
        0's address instead and keeps it there, forwarding F to that
        listener, then all_reduces [1337] * 4 (of DTYPE: float32, or int64
        as tcp_fault_rank's ranks have). It prints "stranger: ready"
        once it reaches the store, "stranger: a victim connected from ..."
        for each connection it forwards, and at the end
        either "stranger: all_reduce done: [...]" or "stranger: failed: ...".

The stranger also writes the job key first (its own job id, world size 2)
and claims rank 0, so the rank that joins before the job's rank 0 takes its
job for the job's: without a token nothing tells them apart.
"""

import datetime
import os
import socket
import sys
import threading
import time

ADDRESS_KEY = "ringlab/tcp/addr/0"


def agent(port, seconds):
    import torch.distributed as dist
    store = dist.TCPStore("127.0.0.1", port, 3, True, timeout=datetime.timedelta(seconds=30),
                          wait_for_workers=False)
    print(f"agent: store on port {port}", flush=True)
    time.sleep(seconds)
    del store


def victim(rank, port, delay):
    import torch
    import torch.distributed as dist
    import ringlab.torch  # noqa: F401
    store = dist.TCPStore("127.0.0.1", port, 2, False, timeout=datetime.timedelta(seconds=30))
    time.sleep(delay)
    try:
        dist.init_process_group("ringlab", store=store, rank=rank, world_size=2,
                                timeout=datetime.timedelta(seconds=10))
        data = torch.full((4,), float(rank + 1))
        dist.all_reduce(data)
        print(f"rank {rank}: all_reduce {data.tolist()}", flush=True)
    except Exception as error:  # noqa: BLE001 - the test reads what each rank says
        print(f"rank {rank}: failed: {error}", flush=True)
        sys.exit(1)


class Forwarder:
    """Listens on OWN_ADDRESS:0 and pumps every connection to and from the
    stranger's ringlab listener (127.0.0.1:target, set once it is known)."""

    def __init__(self, own_address):
        self.listener = socket.create_server((own_address, 0))
        self.port = self.listener.getsockname()[1]
        self.target = None
        self.ready = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            client, peer = self.listener.accept()
            print(f"stranger: a victim connected from {peer[0]}:{peer[1]}", flush=True)
            self.ready.wait()
            inner = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((client, inner), (inner, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def stranger(host, port, prefix, own_address, seconds, dtype):
    import torch
    import torch.distributed as dist
    from ringlab import _ringlab
    from ringlab.torch import StoreAdapter, _buf

    deadline = time.monotonic() + seconds
    while True:
        try:
            raw = dist.TCPStore(host, port, 2, False, timeout=datetime.timedelta(seconds=30))
            break
        except RuntimeError:
            if time.monotonic() > deadline:
                print(f"stranger: never reached the store at {host}:{port}", flush=True)
                return
            time.sleep(0.05)
    store = dist.PrefixStore(prefix, raw) if prefix else raw
    forwarder = Forwarder(own_address)
    published = f"{own_address}:{forwarder.port}".encode()
    keeper = dist.PrefixStore(prefix, dist.TCPStore(host, port, 2, False)) if prefix else \
        dist.TCPStore(host, port, 2, False)

    def keep_address():  # rank 0's own write is overwritten at once
        try:
            while time.monotonic() < deadline:
                keeper.set(ADDRESS_KEY, published)
                time.sleep(0.001)
        except RuntimeError:  # the store is gone: the job ended
            pass

    class Steering(StoreAdapter):
        def set(self, key, value):
            if key == ADDRESS_KEY:
                forwarder.target = int(value.decode().rsplit(":", 1)[1])
                forwarder.ready.set()
                threading.Thread(target=keep_address, daemon=True).start()
                value = published
            super().set(key, value)

    store.set(ADDRESS_KEY, published)  # there before the job's rank 0 says anything
    print("stranger: ready", flush=True)
    try:
        group = _ringlab.Group(Steering(store), 0, 2, int(seconds * 1000), {})
        raw.add("store_based_barrier_key:1", 1)  # torch's barrier after a group is made
        data = torch.full((4,), 1337, dtype=getattr(torch, dtype))
        group.all_reduce(_buf(data, "the stranger's tensor"), "sum")
        print(f"stranger: all_reduce done: {data.tolist()}", flush=True)
    except Exception as error:  # noqa: BLE001 - the test reads what happened
        print(f"stranger: failed: {error}", flush=True)


def main():
    from common import require_torch
    require_torch()
    role = sys.argv[1]
    if role == "agent":
        agent(int(sys.argv[2]), float(sys.argv[3]))
    elif role == "victim":
        victim(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    elif role == "stranger":
        stranger(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], float(sys.argv[6]),
                 sys.argv[7] if len(sys.argv) > 7 else "float32")
    else:
        raise SystemExit(f"unknown role {role}")
    sys.stdout.flush()
    os._exit(0)  # the stranger's threads may still block on sockets


if __name__ == "__main__":
    main()
