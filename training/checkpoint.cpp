#include "training/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "ops/atomic_file.hpp"
#include "ops/read_file.hpp"
#include "training/finite.hpp"

namespace ringlab::training {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFormat = "ringlab-checkpoint";

// ---- writing ---------------------------------------------------------------------

Json tensor_json(const FloatTensor& t) {
  Json values = Json::array();
  for (float v : t.values()) values.push_back(static_cast<double>(v));
  return Json{{"shape", t.shape()}, {"values", std::move(values)}};
}

Json optimizer_json(const OptimizerState& state) {
  Json params = Json::array();
  for (std::size_t i = 0; i < state.momentum_buffers.size(); ++i) params.push_back(i);
  const SgdOptions& o = state.options;
  Json group{{"lr", o.lr},
             {"momentum", o.momentum},
             {"dampening", o.dampening},
             {"weight_decay", o.weight_decay},
             {"nesterov", o.nesterov},
             {"params", std::move(params)}};
  Json per_parameter = Json::object();
  for (std::size_t i = 0; i < state.momentum_buffers.size(); ++i)
    if (state.momentum_buffers[i])
      per_parameter[std::to_string(i)] =
          Json{{"momentum_buffer", tensor_json(*state.momentum_buffers[i])}};
  return Json{{"type", "SGD"},
              {"param_groups", Json::array({std::move(group)})},
              {"state", std::move(per_parameter)}};
}

// A checkpoint holds finite numbers only: JSON has no NaN or infinity (they
// would be written as null, which no reader takes back), and a model that
// has them has diverged; saving it would replace the last good checkpoint
// with one that cannot be resumed from.
void refuse_non_finite(const Checkpoint& checkpoint, const std::string& path) {
  const auto refuse = [&](const std::string& what, double value) {
    throw CheckpointError("cannot save checkpoint '" + path + "': " + what + " is " +
                          number_text(value) +
                          ": the training that made it has diverged (a loss or a weight became "
                          "NaN or infinite), so nothing was written and '" +
                          path + "' keeps what it had; lower the learning rate and train again");
  };
  const auto check = [&](const std::string& where, const FloatTensor& t) {
    if (const auto i = first_non_finite(t.values()))
      refuse(where + " value " + std::to_string(*i), t[*i]);
  };
  for (const StateEntry& entry : checkpoint.model) check("entry '" + entry.name + "'", entry.value);
  if (!checkpoint.optimizer) return;
  const SgdOptions& o = checkpoint.optimizer->options;
  for (const auto& [name, value] :
       {std::pair{"lr", o.lr}, std::pair{"momentum", o.momentum},
        std::pair{"dampening", o.dampening}, std::pair{"weight_decay", o.weight_decay}})
    if (!std::isfinite(value)) refuse(std::string("the optimizer's ") + name, value);
  const auto& buffers = checkpoint.optimizer->momentum_buffers;
  for (std::size_t k = 0; k < buffers.size(); ++k)
    if (buffers[k]) check("the momentum buffer of parameter " + std::to_string(k), *buffers[k]);
}

// ---- reading ---------------------------------------------------------------------

[[noreturn]] void damaged(const std::string& path, const std::string& what) {
  throw CheckpointError("checkpoint '" + path + "' is damaged: " + what);
}

const Json& member(const std::string& path, const Json& object, const char* name,
                   const std::string& where) {
  if (!object.is_object() || !object.contains(name))
    damaged(path, where + " has no \"" + name + "\"");
  return object.at(name);
}

FloatTensor tensor_from(const std::string& path, const Json& j, const std::string& where) {
  const Json& shape = member(path, j, "shape", where);
  const Json& values = member(path, j, "values", where);
  std::vector<std::int64_t> dims;
  if (!shape.is_array() || shape.empty() || shape.size() > 2)
    damaged(path, where + ": \"shape\" must list one or two sizes");
  for (const Json& d : shape) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
      damaged(path, where + ": a size in \"shape\" is not a count");
    dims.push_back(d.get<std::int64_t>());
  }
  FloatTensor t(dims);
  if (!values.is_array() || values.size() != t.numel())
    damaged(path, where + " has shape " + t.shape_string() + " (" + std::to_string(t.numel()) +
                      " values) but " + std::to_string(values.is_array() ? values.size() : 0) +
                      " values");
  for (std::size_t i = 0; i < t.numel(); ++i) {
    if (values[i].is_null())
      damaged(path, where + ": value " + std::to_string(i) +
                        " is null, not a number (JSON writers save NaN and infinity as null: "
                        "the training that wrote it had diverged)");
    if (!values[i].is_number())
      damaged(path, where + ": value " + std::to_string(i) + " is not a number");
    const double value = values[i].get<double>();
    t[i] = static_cast<float>(value);
    if (!std::isfinite(t[i]))
      damaged(path, where + ": value " + std::to_string(i) + " is " + number_text(value) +
                        ", outside float32's range (the largest float32 is " +
                        number_text(std::numeric_limits<float>::max()) + ")");
  }
  return t;
}

OptimizerState optimizer_from(const std::string& path, const Json& j) {
  const std::string where = "\"optimizer\"";
  const Json& type = member(path, j, "type", where);
  if (type != "SGD")
    damaged(path, "the optimizer state is of type " + type.dump() + "; this library has SGD only");
  const Json& groups = member(path, j, "param_groups", where);
  if (!groups.is_array() || groups.size() != 1)
    damaged(path, "\"param_groups\" must hold one group");
  const Json& g = groups[0];
  const auto number = [&](const char* name) {
    const Json& v = member(path, g, name, "the parameter group");
    if (!v.is_number())
      damaged(path, std::string("the parameter group's \"") + name + "\" is not a number");
    return v.get<double>();
  };
  OptimizerState state;
  state.options.lr = number("lr");
  state.options.momentum = number("momentum");
  state.options.dampening = number("dampening");
  state.options.weight_decay = number("weight_decay");
  const Json& nesterov = member(path, g, "nesterov", "the parameter group");
  if (!nesterov.is_boolean())
    damaged(path, "the parameter group's \"nesterov\" is not true or false");
  state.options.nesterov = nesterov.get<bool>();
  const Json& params = member(path, g, "params", "the parameter group");
  if (!params.is_array()) damaged(path, "the parameter group's \"params\" is not a list");
  state.momentum_buffers.resize(params.size());
  const Json& per_parameter = member(path, j, "state", where);
  if (!per_parameter.is_object()) damaged(path, "the optimizer's \"state\" is not an object");
  for (const auto& [key, entry] : per_parameter.items()) {
    std::size_t index = 0;
    try {
      std::size_t used = 0;
      index = std::stoul(key, &used);
      if (used != key.size()) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      damaged(path,
              "the optimizer state has an entry \"" + key + "\" that is not a parameter index");
    }
    if (index >= state.momentum_buffers.size())
      damaged(path, "the optimizer state has an entry for parameter " + key +
                        " but the group has " + std::to_string(state.momentum_buffers.size()) +
                        " parameters");
    if (entry.is_object() && entry.contains("momentum_buffer"))
      state.momentum_buffers[index] =
          tensor_from(path, entry.at("momentum_buffer"), "the momentum buffer of parameter " + key);
  }
  return state;
}

// ---- parsing ---------------------------------------------------------------------

[[noreturn]] void not_ours(const std::string& path, const std::string& why) {
  throw CheckpointError("checkpoint '" + path + "' is not a ringlab checkpoint: " + why +
                        "; ringlab reads only the JSON checkpoints it writes (training/"
                        "checkpoint.hpp): give the path of one");
}

std::string read_checkpoint(const std::string& path) {
  std::string text;
  try {
    text = read_regular_file(path, "checkpoint", kMaxCheckpointBytes);
  } catch (const std::runtime_error& e) {
    throw CheckpointError(e.what());
  }
  if (text.empty())
    throw CheckpointError("checkpoint '" + path +
                          "' is empty (0 bytes): it was never written completely");
  return text;
}

// Where the parser is, for naming the entry of a number it cannot take:
// one frame per open object or array, with the member being read or the
// elements passed.
class ParsePosition {
 public:
  Json::parser_callback_t callback() {
    return [this](int depth, nlohmann::detail::parse_event_t event, Json& parsed) {
      using Event = nlohmann::detail::parse_event_t;
      const auto at = static_cast<std::size_t>(depth);
      if (frames_.size() <= at) frames_.resize(at + 1);
      if (event == Event::object_start || event == Event::array_start) {
        frames_.resize(at + 2);
        frames_[at + 1] = Frame{event == Event::array_start, "", 0};
      } else if (event == Event::key) {
        frames_[at].key = parsed.get<std::string>();
      } else {  // a value, or the end of an object or array: one more element
        ++frames_[at].elements;
        if (event != Event::value) frames_.resize(at + 1);
      }
      return true;
    };
  }
  // "entry 'net1.weight': value 3", or a JSON pointer: "the value at
  // /optimizer/param_groups/0/lr".
  std::string describe() const {
    std::vector<std::string> parts;
    for (std::size_t d = 1; d < frames_.size(); ++d)
      parts.push_back(frames_[d].array ? std::to_string(frames_[d].elements) : frames_[d].key);
    if (parts.size() == 4 && parts[0] == "model" && parts[2] == "values")
      return "entry '" + parts[1] + "': value " + parts[3];
    std::string pointer;
    for (const std::string& part : parts) pointer += "/" + part;
    return "the value at " + pointer;
  }

 private:
  struct Frame {
    bool array = false;
    std::string key;           // an object's member being read
    std::size_t elements = 0;  // an array's elements passed
  };
  std::vector<Frame> frames_;
};

// The file's JSON, once it is known to be a ringlab checkpoint (compact, as
// save_checkpoint writes it, or laid out by another tool).
Json parse_checkpoint(const std::string& path, const std::string& text) {
  if (text.starts_with("PK\x03\x04")) not_ours(path, "it is a zip archive, as torch.save writes");
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{')
    not_ours(path, "it is not a JSON object (it starts with " +
                       Json(text.substr(0, std::min<std::size_t>(text.size(), 16))).dump() + ")");
  ParsePosition position;
  Json file;
  try {
    file = Json::parse(text, position.callback());
  } catch (const Json::parse_error& e) {
    if (e.byte >= text.size())
      throw CheckpointError("checkpoint '" + path + "' is truncated: it ends after " +
                            std::to_string(text.size()) +
                            " bytes in the middle of the data (was its writer killed while "
                            "writing it without a temporary file?)");
    throw CheckpointError("checkpoint '" + path + "' is damaged: not valid JSON at byte " +
                          std::to_string(e.byte) + " of " + std::to_string(text.size()));
  } catch (const Json::out_of_range& e) {
    // 406: a number past a double's range, such as 1e999.
    const std::string what = e.what();
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    const std::string number =
        open < close ? what.substr(open + 1, close - open - 1) : std::string("a number");
    damaged(path, position.describe() + " is " + number +
                      ", outside float32's range (the largest float32 is " +
                      number_text(std::numeric_limits<float>::max()) + ")");
  }
  if (!file.is_object() || !file.contains("format"))
    not_ours(path, "it is JSON without a \"format\" member");
  if (file["format"] != kFormat)
    not_ours(path, "its \"format\" is " + file["format"].dump() + ", not \"" +
                       std::string(kFormat) + "\"");
  return file;
}

}  // namespace

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path) {
  refuse_non_finite(checkpoint, path);
  Json file{{"format", kFormat}, {"version", kCheckpointVersion}};
  if (checkpoint.epoch) file["epoch"] = *checkpoint.epoch;
  Json model = Json::object();
  for (const StateEntry& entry : checkpoint.model) {
    if (model.contains(entry.name))
      throw CheckpointError("cannot save checkpoint '" + path +
                            "': the state dict has two entries named '" + entry.name + "'");
    model[entry.name] = tensor_json(entry.value);
  }
  file["model"] = std::move(model);
  if (checkpoint.optimizer) file["optimizer"] = optimizer_json(*checkpoint.optimizer);
  try {
    write_file_atomically(path, "checkpoint", file.dump() + "\n");
  } catch (const std::runtime_error& e) {
    throw CheckpointError(e.what());
  }
}

Checkpoint load_checkpoint(const std::string& path) {
  const Json file = parse_checkpoint(path, read_checkpoint(path));
  const Json& version = member(path, file, "version", "the file");
  if (!version.is_number_integer()) damaged(path, "\"version\" is not a number");
  if (version.get<int>() != kCheckpointVersion)
    throw CheckpointError("checkpoint '" + path + "' has format version " + version.dump() +
                          "; this ringlab reads version " + std::to_string(kCheckpointVersion));
  Checkpoint checkpoint;
  if (file.contains("epoch")) {
    if (!file["epoch"].is_number_integer()) damaged(path, "\"epoch\" is not an integer");
    checkpoint.epoch = file["epoch"].get<std::int64_t>();
  }
  const Json& model = member(path, file, "model", "the file");
  if (!model.is_object()) damaged(path, "\"model\" is not an object");
  for (const auto& [name, entry] : model.items())
    checkpoint.model.push_back({name, tensor_from(path, entry, "entry '" + name + "'")});
  if (file.contains("optimizer")) checkpoint.optimizer = optimizer_from(path, file["optimizer"]);
  return checkpoint;
}

}  // namespace ringlab::training
