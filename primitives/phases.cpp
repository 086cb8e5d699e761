#include "primitives/phases.hpp"

#include <stdexcept>
#include <string>

namespace ringlab::detail {

void check_blocks(const Comm& comm, Elems buf, std::span<const Chunk> blocks, bool consecutive,
                  const char* collective, const char* algorithm) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("rank " + std::to_string(comm.rank()) + ": " + collective + " " +
                                algorithm + ": " + why);
  };
  if (blocks.size() != static_cast<std::size_t>(comm.size()))
    fail(std::to_string(blocks.size()) + " blocks for a world of " +
         std::to_string(comm.size()) + " ranks");
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].end() > buf.count)
      fail("block " + std::to_string(b) + " ends at element " + std::to_string(blocks[b].end()) +
           ", past the buffer's " + std::to_string(buf.count));
    if (consecutive && b > 0 && blocks[b].offset != blocks[b - 1].end())
      fail("block " + std::to_string(b) + " does not start where block " +
           std::to_string(b - 1) + " ends; this algorithm needs consecutive blocks");
  }
}

}  // namespace ringlab::detail
