#include "ops/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ringlab {

void write_file_atomically(const std::string& path, std::string_view what,
                           const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const auto failure = [&](const std::string& step) {
    return std::runtime_error("cannot write " + std::string(what) + " '" + path + "': " + step +
                              " failed: " + std::strerror(errno));
  };
  std::string temporary = (folder / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int created = ::mkstemp(temporary.data());  // a fresh name: no two writers collide
  if (created < 0) throw failure("creating a temporary file in '" + folder.string() + "'");
  ::fchmod(created, 0644);  // mkstemp makes it 0600; the file is not secret
  ::close(created);
  try {
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      if (!out) throw failure("opening '" + temporary + "'");
      write(out);
      out.close();
      if (!out) throw failure("writing '" + temporary + "' (is the disk full?)");
    }
    const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw failure("reopening '" + temporary + "'");
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced) throw failure("flushing '" + temporary + "' to disk");
    if (::rename(temporary.c_str(), path.c_str()) != 0)
      throw failure("renaming '" + temporary + "' over it");
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  // The rename itself must reach the disk too.
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view what,
                           std::string_view contents) {
  write_file_atomically(path, what, [contents](std::ostream& out) {
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  });
}

}  // namespace ringlab
