// Checkpoints: a model's state dict, optionally an optimizer's state and an
// epoch, in one file written atomically.
//
//   save_checkpoint({.model = ddp.state_dict(), .optimizer = sgd.state_dict(), .epoch = 3}, path);
//   Checkpoint c = load_checkpoint(path);
//   ddp.load_state_dict(c.model);
//
// The file format (version 1) is JSON (RFC 8259), one object:
//
//   {"format": "ringlab-checkpoint",          always first; identifies the file
//    "version": 1,
//    "epoch": 35,                             optional
//    "model": {                               the state dict, in its order
//      "module.net1.weight": {"shape": [10, 10], "values": [100 numbers]},
//      "module.net1.bias":   {"shape": [10],     "values": [10 numbers]}, ...},
//    "optimizer": {                           optional: optimizer.state_dict()
//      "type": "SGD",
//      "param_groups": [{"lr": 0.001, "momentum": 0.9, "dampening": 0,
//                        "weight_decay": 0, "nesterov": false,
//                        "params": [0, 1, 2, 3]}],
//      "state": {"0": {"momentum_buffer": {"shape": [...], "values": [...]}}, ...}}}
//
// Values are float32 numbers written as the shortest decimal that reads back
// to the same double, so every float32 survives exactly; "values" lists the
// elements row-major. "state" has an entry for each parameter index that has
// a momentum buffer, as PyTorch's optimizer state does. Readers must ignore
// members they do not know.
//
// Writing goes to a temporary file in the same folder, which is flushed to
// disk (fsync) and then renamed over the path, and the folder is synced: a
// reader sees the old file or the new one, never half of one, even if the
// writer is killed (ops/atomic_file.hpp; a symbolic link is written through
// to its target, and a folder, device or FIFO in the path's place is
// refused). A checkpoint holding a NaN or an infinity (a diverged model, an
// optimizer setting) is refused before anything is written: JSON cannot hold
// them, and the previous checkpoint stays whole.
//
// Reading takes a regular file of at most kMaxCheckpointBytes (never a
// device or a FIFO), compact as written here or laid out by another JSON
// tool, checks everything and throws CheckpointError naming the file, and
// the entry where there is one, saying what is wrong: no such file, a
// folder, not a ringlab checkpoint (e.g. a torch.save zip), truncated, a
// newer version, an entry whose values do not fill its shape, or a value
// that is not a number or does not fit a float32 (1e39, 1e999). Whether the
// state fits a model is for Module::load_state_dict to say.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "training/module.hpp"
#include "training/sgd.hpp"

namespace ringlab::training {

inline constexpr int kCheckpointVersion = 1;
// The largest checkpoint load_checkpoint reads: about 17 million float32
// values as JSON text.
inline constexpr std::size_t kMaxCheckpointBytes = std::size_t{256} << 20;

struct Checkpoint {
  StateDict model = {};
  std::optional<OptimizerState> optimizer = std::nullopt;
  std::optional<std::int64_t> epoch = std::nullopt;
};

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path);
Checkpoint load_checkpoint(const std::string& path);

}  // namespace ringlab::training
