"""A c10d TCPStore server that speaks torch 2.x's protocol (VALIDATE first,
query numbers shifted by one, CANCEL_WAIT), written here from PyTorch's
TCPStoreBackend.cpp (the classic server) and TCPStoreLibUvBackend.cpp (the
libuv one), to check ringlab's client on the protocol this machine's torch
1.13 does not speak. docs/pytorch.md lists the requests.

mode "classic": a connection whose first request is not VALIDATE is closed.
mode "libuv":   such a request is left unread until more bytes come, then
                everything is read from the start as ordinary requests.
mode "silent":  accepts connections and never answers (not a store).
"""

import socket
import struct
import threading

VALIDATE, SET, COMPARE_SET, GET, ADD, CHECK, WAIT, GETNUMKEYS, DELETE_KEY = range(9)
CANCEL_WAIT = 12
MAGIC = 0x3C85F7CE


class Incomplete(Exception):
    """The buffer ends inside a request."""


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        if self.at + n > len(self.data):
            raise Incomplete()
        chunk = self.data[self.at:self.at + n]
        self.at += n
        return chunk

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def string(self):
        return self.take(self.u64())


class FakeStore:
    def __init__(self, mode):
        self.mode = mode
        self.keys = {}
        self.waiters = []  # [connection, set of keys still missing]
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.connections = []
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self):
        self.listener.close()
        for c in self.connections:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    def _accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection):
        buffer, greeted = b"", False
        while True:
            try:
                data = connection.recv(65536)
            except OSError:
                data = b""
            if not data:
                self._forget(connection)
                return
            if self.mode == "silent":
                continue
            buffer += data
            try:
                buffer, greeted = self._parse(connection, buffer, greeted)
            except (ConnectionError, OSError):
                self._forget(connection)
                connection.close()
                return

    def _parse(self, connection, buffer, greeted):
        """Handles every whole request in buffer; returns what is left."""
        while buffer:
            reader = Reader(buffer)
            command = reader.take(1)[0]
            if not greeted:
                if command != VALIDATE:
                    if self.mode == "classic":
                        raise ConnectionError("miscellaneous client without VALIDATE")
                    return buffer, True  # libuv: left unread; next time ordinary requests
                try:
                    magic = struct.unpack("<I", reader.take(4))[0]
                except Incomplete:
                    return buffer, greeted
                if magic != MAGIC:
                    raise ConnectionError("wrong magic")
                greeted, buffer = True, buffer[reader.at:]
                continue
            try:
                self._request(connection, command, reader)
            except Incomplete:
                return buffer, greeted
            buffer = buffer[reader.at:]
        return buffer, greeted

    def _request(self, connection, command, r):
        with self.lock:
            if command == SET:
                key, value = r.string(), r.string()
                self._set(key, value)
            elif command == COMPARE_SET:
                key, expected, desired = r.string(), r.string(), r.string()
                if key not in self.keys:
                    answer = desired if expected == b"" else expected
                    if expected == b"":
                        self._set(key, desired)
                else:
                    if self.keys[key] == expected:
                        self._set(key, desired)
                    answer = self.keys[key]
                connection.sendall(struct.pack("<Q", len(answer)) + answer)
            elif command == GET:
                value = self.keys.get(r.string(), b"")
                connection.sendall(struct.pack("<Q", len(value)) + value)
            elif command == ADD:
                key, delta = r.string(), struct.unpack("<q", r.take(8))[0]
                total = int(self.keys.get(key, b"0")) + delta
                connection.sendall(struct.pack("<q", total))
                self._set(key, str(total).encode())
            elif command == CHECK:
                keys = [r.string() for _ in range(r.u64())]
                connection.sendall(bytes([0 if all(k in self.keys for k in keys) else 1]))
            elif command == WAIT:
                missing = {k for k in (r.string() for _ in range(r.u64())) if k not in self.keys}
                if missing:
                    self.waiters.append([connection, missing])
                else:
                    connection.sendall(b"\0")
            elif command == GETNUMKEYS:
                connection.sendall(struct.pack("<q", len(self.keys)))
            elif command == DELETE_KEY:
                connection.sendall(struct.pack("<q", 1 if self.keys.pop(r.string(), None)
                                               is not None else 0))
            elif command == CANCEL_WAIT:
                self.waiters = [w for w in self.waiters if w[0] is not connection]
                connection.sendall(b"\1")
            else:
                raise ConnectionError(f"invalid command {command}")

    def _set(self, key, value):
        self.keys[key] = value
        for waiter in list(self.waiters):
            waiter[1].discard(key)
            if not waiter[1]:
                self.waiters.remove(waiter)
                waiter[0].sendall(b"\0")

    def _forget(self, connection):
        with self.lock:
            self.waiters = [w for w in self.waiters if w[0] is not connection]
