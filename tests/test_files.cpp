// ops/atomic_file and ops/read_file against what is not a plain file (issue
// 21, item 3). Everything runs in a fresh temporary folder: the devices are
// made there with mknod (as root; the cases say so and pass over the device
// part otherwise), so a writer that still renamed over a device replaces that
// copy, never one in /dev. The only real devices used are read (/dev/zero,
// /dev/null), which cannot harm them.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "file_test_support.hpp"
#include "ops/atomic_file.hpp"
#include "ops/read_file.hpp"

namespace fs = std::filesystem;
using ringlab::check_file_destination;
using ringlab::read_regular_file;
using ringlab::write_file_atomically;

namespace {

using namespace ringlab::testing;

// A character device like /dev/full (1, 7), made in `folder`; "" when this
// process may not make devices (not root).
std::string device_copy(const Folder& folder) {
  const std::string path = folder / "full";
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) return "";
  return path;
}

// A listening Unix socket's file in `folder`; the descriptor stays open.
std::string socket_file(const Folder& folder, int& fd) {
  const std::string path = folder / "socket";
  fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof address.sun_path);
  std::strcpy(address.sun_path, path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return path;
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace

TEST_SUITE("files_write") {
  TEST_CASE("a device node is refused, named, and left a device") {
    Folder folder;
    const std::string device = device_copy(folder);
    if (device.empty()) {
      MESSAGE("not root: mknod is refused, so the device case is left out");
      return;
    }
    const std::string error = error_of([&] { write_file_atomically(device, "trace file", "{}"); });
    INFO(error);
    CHECK(contains(error, "cannot write trace file '" + device + "'"));
    CHECK(contains(error, "it is a character device, not a regular file"));
    CHECK(contains(error, "give the path of a file"));
    CHECK(type_of(device) == S_IFCHR);
    CHECK(temporaries_left(folder.path, "full") == 0);
    CHECK(error_of([&] { check_file_destination(device, "trace file"); }) == error);
  }

  TEST_CASE("a FIFO, a socket and a folder are refused and left as they were") {
    Folder folder;
    const std::string fifo = folder / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    int socket_fd = -1;
    const std::string socket = socket_file(folder, socket_fd);
    const std::string subfolder = folder / "sub";
    fs::create_directory(subfolder);
    for (const auto& [path, kind, type] :
         {std::tuple{fifo, "a FIFO (named pipe), not a regular file", S_IFIFO},
          std::tuple{socket, "a socket, not a regular file", S_IFSOCK},
          std::tuple{subfolder, "it is a folder: give the path of a file", S_IFDIR}}) {
      CAPTURE(path);
      const std::string error = error_of([&] { write_file_atomically(path, "checkpoint", "x"); });
      CHECK(contains(error, "cannot write checkpoint '" + path + "'"));
      CHECK(contains(error, kind));
      CHECK(type_of(path) == static_cast<mode_t>(type));
      CHECK(error_of([&] { check_file_destination(path, "checkpoint"); }) == error);
    }
    ::close(socket_fd);
    CHECK(temporaries_left(folder.path, "fifo") == 0);
  }

  TEST_CASE("a missing folder is named, with what to do") {
    Folder folder;
    const std::string path = folder / "no-such-folder/t.json";
    const std::string error = error_of([&] { write_file_atomically(path, "trace file", "{}"); });
    CHECK(error == "cannot write trace file '" + path + "': the folder '" +
                       folder / "no-such-folder" + "' does not exist: create it first (mkdir -p '" +
                       folder / "no-such-folder" + "'), or give a path in a folder that exists");
    CHECK(error_of([&] { check_file_destination(path, "trace file"); }) == error);
    put(folder / "plain", "x");
    CHECK(contains(error_of([&] { write_file_atomically(folder / "plain/t.json", "trace", "{}"); }),
                   "'" + folder / "plain" + "' is a regular file, not a folder"));
  }

  TEST_CASE("a symbolic link is written through: the link stays, its target changes") {
    Folder here, shared;
    const std::string target = shared / "checkpoint.pt";
    const std::string link = here / "checkpoint.pt";
    put(target, "epoch 3");
    fs::create_symlink(target, link);
    write_file_atomically(link, "checkpoint", "epoch 5");
    CHECK(type_of(link) == S_IFLNK);
    CHECK(fs::read_symlink(link) == fs::path(target));
    CHECK(contents(target) == "epoch 5");
    CHECK(temporaries_left(here.path, "checkpoint.pt") == 0);
    CHECK(temporaries_left(shared.path, "checkpoint.pt") == 0);

    // A relative link, through a second link, to a file not made yet.
    fs::create_directory(here.path / "d");
    fs::create_symlink("d/new.json", here / "second");
    fs::create_symlink("second", here / "first");
    write_file_atomically(here / "first", "trace file", "new");
    CHECK(type_of(here / "first") == S_IFLNK);
    CHECK(type_of(here / "second") == S_IFLNK);
    CHECK(contents(here / "d/new.json") == "new");

    // A link to something that is not a regular file, and a loop.
    fs::create_symlink(here / "sub-folder", here / "to-folder");
    fs::create_directory(here.path / "sub-folder");
    CHECK(contains(error_of([&] { write_file_atomically(here / "to-folder", "trace", "x"); }),
                   "(a symbolic link to '" + here / "sub-folder" + "'): it is a folder"));
    fs::create_symlink("loop-b", here / "loop-a");
    fs::create_symlink("loop-a", here / "loop-b");
    CHECK(contains(error_of([&] { write_file_atomically(here / "loop-a", "trace", "x"); }),
                   "symbolic links go round in a loop"));
    if (const std::string device = device_copy(here); !device.empty()) {
      fs::create_symlink(device, here / "to-device");
      CHECK(contains(error_of([&] { write_file_atomically(here / "to-device", "trace", "x"); }),
                     "a character device, not a regular file"));
      CHECK(type_of(device) == S_IFCHR);
    }
  }

  TEST_CASE("a replaced file keeps its mode") {
    Folder folder;
    for (const mode_t mode : {mode_t{0444}, mode_t{0600}, mode_t{0640}, mode_t{0755}}) {
      CAPTURE(mode);
      const std::string path = folder / ("mode-" + std::to_string(mode));
      put(path, "old");
      REQUIRE(::chmod(path.c_str(), mode) == 0);
      write_file_atomically(path, "checkpoint", "new");
      struct stat st {};
      REQUIRE(::stat(path.c_str(), &st) == 0);
      CHECK((st.st_mode & 07777) == mode);
      CHECK(contents(path) == "new");
    }
    // A new file is 0644, whatever mkstemp's 0600.
    write_file_atomically(folder / "fresh", "checkpoint", "new");
    struct stat st {};
    REQUIRE(::stat((folder / "fresh").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
  }

  TEST_CASE("the temporaries of killed writers are removed at the next write, a live one's not") {
    Folder folder;
    const std::string path = folder / "c.json";
    const std::string big(4 << 20, 'x');  // long enough to be killed while writing it
    std::mt19937 random(2121);
    for (int kill = 0; kill < 20; ++kill) {
      const pid_t child = ::fork();
      REQUIRE(child >= 0);
      if (child == 0)
        for (;;) write_file_atomically(path, "checkpoint", big);
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + random() % 40));
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
    }
    const std::size_t left = temporaries_left(folder.path, "c.json");
    MESSAGE(left << " temporaries left by 20 killed writers");
    CHECK(left <= 1);  // each write removes those before it: the last one's at most
    // A writer still at work: its temporary is locked and must stay.
    const std::string live = folder / ".c.json.tmp-LIVE00";
    const int live_fd = ::open(live.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    REQUIRE(live_fd >= 0);
    REQUIRE(::flock(live_fd, LOCK_EX) == 0);
    // And one an older ringlab left (no lock), and a name that only looks alike.
    put(folder / ".c.json.tmp-ab12CD", "stale");
    put(folder / ".c.json.tmp-notmine", "someone else's");
    write_file_atomically(path, "checkpoint", "whole");
    CHECK(contents(path) == "whole");
    CHECK(fs::exists(live));
    CHECK(fs::exists(folder / ".c.json.tmp-notmine"));
    CHECK(temporaries_left(folder.path, "c.json") == 2);  // the live one and "notmine"
    ::close(live_fd);
  }
}

TEST_SUITE("files_read") {
  TEST_CASE("a regular file is read whole, also through a symbolic link") {
    Folder folder;
    const std::string path = folder / "model.json";
    std::string text(100000, 'a');
    text += "end";
    put(path, text);
    CHECK(read_regular_file(path, "cost model file", 1 << 20) == text);
    fs::create_symlink(path, folder / "link");
    CHECK(read_regular_file(folder / "link", "cost model file", 1 << 20) == text);
    put(folder / "empty", "");
    CHECK(read_regular_file(folder / "empty", "cost model file", 10).empty());
    CHECK(read_regular_file(path, "x", text.size()) == text);  // exactly the bound
  }

  TEST_CASE("a missing file, a folder, a device, a FIFO and a file past the bound are refused") {
    Folder folder;
    CHECK(error_of([&] { read_regular_file(folder / "none", "checkpoint", 100); }) ==
          "cannot read checkpoint '" + folder / "none" + "': No such file or directory");
    CHECK(error_of([&] { read_regular_file(folder.path.string(), "checkpoint", 100); }) ==
          "cannot read checkpoint '" + folder.path.string() +
              "': it is a folder, not a file: give the path of a checkpoint file (inside it, "
              "perhaps)");
    const std::string fifo = folder / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    for (const std::string& path : {std::string("/dev/zero"), std::string("/dev/null"), fifo}) {
      CAPTURE(path);
      const std::string error =
          error_within(10, [&] { read_regular_file(path, "checkpoint", 1 << 20); });
      CHECK(contains(error, "cannot read checkpoint '" + path + "': it is a "));
      CHECK(contains(error, ", not a regular file; ringlab reads only regular files"));
    }
    put(folder / "big", std::string(1001, 'x'));
    CHECK(error_of([&] { read_regular_file(folder / "big", "checkpoint", 1000); }) ==
          "cannot read checkpoint '" + folder / "big" +
              "': it is 1001 bytes, more than the 1000 bytes a checkpoint may be: is it the "
              "right file?");
  }
}
