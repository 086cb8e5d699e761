#include "ops/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "ops/read_file.hpp"

namespace ringlab {

namespace {

namespace fs = std::filesystem;

// Linux's own limit on links followed in one path (ELOOP).
constexpr int kMaxSymbolicLinks = 40;
// mkstemp's template: ".NAME" + kTemporaryTag + six random characters.
constexpr std::string_view kTemporaryTag = ".tmp-";
constexpr std::size_t kRandomCharacters = 6;

// Where a write goes: the end of the path's symbolic links, its folder and
// what is there now.
struct Destination {
  fs::path file;
  fs::path folder;
  std::optional<struct stat> existing;  // a regular file, when there is one
  std::string prefix;                   // "cannot write WHAT 'PATH' ...: "
};

std::runtime_error system_failure(const Destination& d, const std::string& step) {
  return std::runtime_error(d.prefix + step + " failed: " + std::strerror(errno));
}

// Follows the final component's symbolic links (a link to a path not made
// yet ends there); the folders on the way are the kernel's to follow.
fs::path follow_links(const std::string& path, std::string_view what) {
  fs::path file(path);
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(file.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return file;
    if (hops == kMaxSymbolicLinks)
      throw std::runtime_error("cannot write " + std::string(what) + " '" + path +
                               "': its symbolic links go round in a loop (more than " +
                               std::to_string(kMaxSymbolicLinks) +
                               "): give the path of a regular file");
    std::error_code error;
    const fs::path target = fs::read_symlink(file, error);
    if (error) return file;  // the lstat/open below will say what is wrong
    file = target.is_absolute() ? target : file.parent_path() / target;
  }
}

void check_folder(const Destination& d) {
  struct stat st {};
  if (::stat(d.folder.c_str(), &st) != 0) {
    if (errno == ENOENT)
      throw std::runtime_error(d.prefix + "the folder '" + d.folder.string() +
                               "' does not exist: create it first (mkdir -p '" + d.folder.string() +
                               "'), or give a path in a folder that exists");
    throw system_failure(d, "looking at the folder '" + d.folder.string() + "'");
  }
  if (!S_ISDIR(st.st_mode))
    throw std::runtime_error(d.prefix + "'" + d.folder.string() + "' is " +
                             std::string(file_type_name(st.st_mode)) +
                             ", not a folder: give a path in a folder");
  if (::access(d.folder.c_str(), W_OK) != 0)
    throw std::runtime_error(d.prefix + "the folder '" + d.folder.string() +
                             "' cannot be written (" + std::strerror(errno) +
                             "): give a path in a folder this user may write");
}

Destination destination(const std::string& path, std::string_view what) {
  Destination d;
  if (path.empty())
    throw std::runtime_error("cannot write " + std::string(what) +
                             ": the path is empty: give a file's path");
  d.file = follow_links(path, what);
  d.folder = d.file.has_parent_path() ? d.file.parent_path() : fs::path(".");
  d.prefix = "cannot write " + std::string(what) + " '" + path + "'";
  if (d.file != fs::path(path)) d.prefix += " (a symbolic link to '" + d.file.string() + "')";
  d.prefix += ": ";
  check_folder(d);
  struct stat st {};
  if (::stat(d.file.c_str(), &st) != 0) {
    if (errno == ENOENT) return d;  // a new file
    throw system_failure(d, "looking at it");
  }
  if (S_ISDIR(st.st_mode))
    throw std::runtime_error(d.prefix +
                             "it is a folder: give the path of a file (inside it, "
                             "perhaps: '" +
                             (d.file / "NAME").string() + "')");
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(d.prefix + "it is " + std::string(file_type_name(st.st_mode)) +
                             ", not a regular file, and ringlab writes only regular files (a "
                             "file renamed over it would replace it): give the path of a file "
                             "to make or replace");
  d.existing = st;
  return d;
}

std::string temporary_prefix(const Destination& d) {
  return "." + d.file.filename().string() + std::string(kTemporaryTag);
}

// Removes the temporaries that writers of this target left when they were
// killed: a file of the target's temporary name whose lock nobody holds.
void remove_stale_temporaries(const Destination& d) {
  const std::string prefix = temporary_prefix(d);
  DIR* folder = ::opendir(d.folder.c_str());
  if (!folder) return;
  while (const dirent* entry = ::readdir(folder)) {
    const std::string_view name(entry->d_name);
    if (name.size() != prefix.size() + kRandomCharacters || !name.starts_with(prefix)) continue;
    const int fd = ::openat(::dirfd(folder), entry->d_name,
                            O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) continue;
    struct stat opened {
    }, named{};
    // Unlinked only while locked, and only if the name still is that file.
    if (::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode) &&
        ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        ::fstatat(::dirfd(folder), entry->d_name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        named.st_dev == opened.st_dev && named.st_ino == opened.st_ino)
      ::unlinkat(::dirfd(folder), entry->d_name, 0);
    ::close(fd);
  }
  ::closedir(folder);
}

// A new temporary file beside the target, locked, with the target's mode
// (and owner, where this process may set it). Returns its descriptor and
// sets `name`.
int make_temporary(const Destination& d, std::string& name) {
  for (int attempt = 0;; ++attempt) {
    name = (d.folder / (temporary_prefix(d) + std::string(kRandomCharacters, 'X'))).string();
    const int fd = ::mkstemp(name.data());  // a fresh name: no two writers collide
    if (fd < 0) throw system_failure(d, "creating a temporary file in '" + d.folder.string() + "'");
    ::flock(fd, LOCK_EX);
    // Another writer's cleanup may have removed it in the moment before the
    // lock: then make another.
    struct stat opened {
    }, named{};
    if (::fstat(fd, &opened) == 0 && ::stat(name.c_str(), &named) == 0 &&
        named.st_ino == opened.st_ino && named.st_dev == opened.st_dev) {
      if (d.existing) {
        if (d.existing->st_uid != opened.st_uid || d.existing->st_gid != opened.st_gid)
          (void)::fchown(fd, d.existing->st_uid, d.existing->st_gid);  // root only; else as is
        ::fchmod(fd, d.existing->st_mode & 07777);
      } else {
        ::fchmod(fd, 0644);  // mkstemp makes it 0600; the file is not secret
      }
      return fd;
    }
    ::close(fd);
    if (attempt == 10)
      throw std::runtime_error(d.prefix + "temporary files in '" + d.folder.string() +
                               "' keep disappearing: is another program removing them?");
  }
}

// Writes the temporary file, flushes it and renames it over the target.
void write_and_rename(const Destination& d, const std::string& temporary, int fd,
                      const std::function<void(std::ostream&)>& write) {
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw system_failure(d, "opening '" + temporary + "'");
    write(out);
    out.close();
    if (!out) throw system_failure(d, "writing '" + temporary + "' (is the disk full?)");
  }
  if (::fsync(fd) != 0) throw system_failure(d, "flushing '" + temporary + "' to disk");
  if (::rename(temporary.c_str(), d.file.c_str()) != 0)
    throw system_failure(d, "renaming '" + temporary + "' over '" + d.file.string() + "'");
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view what,
                           const std::function<void(std::ostream&)>& write) {
  const Destination d = destination(path, what);
  remove_stale_temporaries(d);
  std::string temporary;
  const int fd = make_temporary(d, temporary);
  try {
    write_and_rename(d, temporary, fd, write);
  } catch (...) {
    ::unlink(temporary.c_str());
    ::close(fd);
    throw;
  }
  ::close(fd);  // the lock goes with it, after the rename
  // The rename itself must reach the disk too.
  const int folder = ::open(d.folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder >= 0) {
    ::fsync(folder);
    ::close(folder);
  }
}

void write_file_atomically(const std::string& path, std::string_view what,
                           std::string_view contents) {
  write_file_atomically(path, what, [contents](std::ostream& out) {
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  });
}

void check_file_destination(const std::string& path, std::string_view what) {
  (void)destination(path, what);
}

}  // namespace ringlab
