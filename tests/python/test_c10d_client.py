"""store/c10d_client.hpp against a real c10d TCPStore (this interpreter's
torch's, hosted here: Debian's 1.13 speaks the Legacy protocol, torch 2.x the
Validated one) and against tests/python/c10d_fake_server.py's 2.x servers.

    test_c10d_client.py TOOL torch|fake

TOOL is tests/c10d_client_tool. "torch" needs torch (exits 77 without it).
The expected answers are what a TCPStore holds: torch's own client reads the
keys back where they must be.
"""

import datetime
import subprocess
import sys
import time
import unittest

from common import free_port, require_torch, run

TOOL = sys.argv[1]
KIND = sys.argv[2]

# Every request once, and what a store answers to it (the semantics of
# TCPStore's set/get/add/check/wait/compare_set/delete_key/num_keys).
STEPS = ["set:a=hello", "get:a", "add:n=5", "add:n=2", "check:a,n", "check:a,zz",
         "cas:k::v1", "cas:k:v1:v2", "cas:k:wrong:v3", "cas:absent:x:y", "check:absent",
         "del:n", "del:n", "num", "wait:a,k:1000", "closed"]
ANSWERS = ["set a", "get a = hello", "add n = 5", "add n = 7", "check a,n = 1", "check a,zz = 0",
           "cas k = v1", "cas k = v2", "cas k = v2", "cas absent = x", "check absent = 0",
           "del n = 1", "del n = 0", "num = 2", "wait a,k", "closed = 0"]


def tool(port, steps, prefix="", timeout_ms=5000, seconds=60):
    code, out, err = run([TOOL, "127.0.0.1", str(port), str(timeout_ms), prefix, *steps],
                         timeout=seconds)
    return code, out.splitlines(), err


class Common:
    protocol = None

    def serve(self):  # -> port
        raise NotImplementedError

    def test_every_request(self):
        port = self.serve()
        code, lines, err = tool(port, STEPS)
        self.assertEqual(code, 0, err)
        self.assertEqual(lines, [f"protocol {self.protocol}"] + ANSWERS)

    def test_a_wait_that_times_out_leaves_the_client_usable(self):
        port = self.serve()
        started = time.monotonic()
        code, lines, err = tool(port, ["set:a=1", "wait:a,never:300", "get:never:200", "get:a",
                                       "set:b=2", "get:b", "num"])
        self.assertEqual(code, 0, err)
        self.assertEqual(lines[1], "set a")
        self.assertRegex(lines[2], r"^error timeout: timed out after 300 ms waiting for key\(s\) "
                                   r"'never' in the c10d store at 127\.0\.0\.1:\d+$")
        self.assertRegex(lines[3], r"^error timeout: .*200 ms waiting for key 'never'")
        self.assertEqual(lines[4:], ["get a = 1", "set b", "get b = 2", "num = 2"])
        self.assertLess(time.monotonic() - started, 20)

    def test_nothing_listening_fails_naming_the_address(self):
        port = free_port()
        started = time.monotonic()
        code, lines, _ = tool(port, ["num"], timeout_ms=500)
        self.assertEqual(code, 1)
        self.assertRegex(lines[0], rf"error connect: could not reach the c10d store at "
                                   rf"127\.0\.0\.1:{port} within 500 ms: .*connection refused")
        self.assertLess(time.monotonic() - started, 10)


def torch_protocol():
    import torch
    return "legacy" if torch.__version__.startswith("1.") else "validated"


class TorchServer(Common, unittest.TestCase):
    """torch's own TCPStore server (its default kind), hosted by this process."""
    server_options = {}

    @property
    def protocol(self):
        return torch_protocol()

    def serve(self):
        import torch.distributed as dist
        self.server = dist.TCPStore("127.0.0.1", 0, 1, True,
                                    timeout=datetime.timedelta(seconds=30),
                                    wait_for_workers=False, **self.server_options)
        return self.server.port

    def client(self):
        import torch.distributed as dist
        return dist.TCPStore("127.0.0.1", self.server.port, 1, False,
                             timeout=datetime.timedelta(seconds=10))

    def test_keys_land_where_torchs_prefix_store_sees_them(self):
        import torch.distributed as dist
        port = self.serve()
        torch_side = dist.PrefixStore("/worker/attempt_3", self.client())
        torch_side.set("from_torch", "t")
        code, lines, err = tool(port, ["set:from_ringlab=r", "get:from_torch", "add:count=4"],
                                prefix="/worker/attempt_3/")
        self.assertEqual(code, 0, err)
        self.assertEqual(lines, [f"protocol {self.protocol}", "set from_ringlab", "get from_torch = t",
                                 "add count = 4"])
        self.assertEqual(torch_side.get("from_ringlab"), b"r")
        self.assertEqual(torch_side.add("count", 1), 5)

    def test_a_wait_ends_when_another_client_sets_the_key(self):
        port = self.serve()
        waiting = subprocess.Popen([TOOL, "127.0.0.1", str(port), "10000", "", "get:late:8000"],
                                   stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        self.client().set("late", "arrived")
        out, _ = waiting.communicate(timeout=30)
        self.assertEqual(out.splitlines(), [f"protocol {self.protocol}", "get late = arrived"])

    def test_the_server_going_away_is_reported_as_lost(self):
        port = self.serve()
        client = subprocess.Popen([TOOL, "127.0.0.1", str(port), "5000", "", "set:x=1",
                                   "sleep:1500", "closed", "get:x"],
                                  stdout=subprocess.PIPE, text=True)
        time.sleep(0.7)
        del self.server  # torch stops its server thread and closes the connections
        out, _ = client.communicate(timeout=30)
        lines = out.splitlines()
        self.assertEqual(lines[:2], [f"protocol {self.protocol}", "set x"])
        self.assertEqual(lines[2], "closed = 1")
        self.assertRegex(lines[3], r"^error lost: .*c10d store at 127\.0\.0\.1:\d+")


class TorchClassicServer(TorchServer):
    """torch 2.x's classic server (use_libuv=False), where torch has both."""
    server_options = {"use_libuv": False}


class Validated(Common, unittest.TestCase):
    """The torch 2.x protocol, served by tests/python/c10d_fake_server.py."""
    protocol = "validated"
    mode = "libuv"

    def serve(self):
        from c10d_fake_server import FakeStore
        self.server = FakeStore(self.mode)
        self.addCleanup(self.server.close)
        return self.server.port


class ValidatedClassic(Validated):
    mode = "classic"


class NotAStore(unittest.TestCase):
    def test_a_server_that_never_answers_fails_the_probe_in_time(self):
        from c10d_fake_server import FakeStore
        server = FakeStore("silent")
        self.addCleanup(server.close)
        started = time.monotonic()
        code, lines, _ = tool(server.port, ["num"], timeout_ms=800)
        self.assertEqual(code, 1)
        self.assertRegex(lines[0], r"error connect: the server at 127\.0\.0\.1:\d+ did not "
                                   r"answer the c10d protocol probe")
        self.assertLess(time.monotonic() - started, 10)


if __name__ == "__main__":
    if KIND == "torch":
        require_torch()
        import torch.distributed as dist
        cases = [TorchServer]
        if "use_libuv" in (dist.TCPStore.__init__.__doc__ or ""):
            cases.append(TorchClassicServer)
    else:
        cases = [Validated, ValidatedClassic, NotAStore]
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(c) for c in cases)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
