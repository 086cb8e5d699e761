#include "simulator/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace ringlab::sim {

void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write) {
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  try {
    {
      std::ofstream out(temporary);
      if (!out) throw std::runtime_error("cannot write " + what + " '" + temporary + "'");
      write(out);
      out.close();
      if (!out)
        throw std::runtime_error("cannot write " + what + " '" + temporary + "' (disk full?)");
    }
    const int fd = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!synced) throw std::runtime_error("cannot flush " + what + " '" + temporary + "' to disk");
    std::filesystem::rename(temporary, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
}

}  // namespace ringlab::sim
