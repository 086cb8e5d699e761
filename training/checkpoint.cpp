#include "training/checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ops/atomic_file.hpp"

namespace ringlab::training {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kFormat = "ringlab-checkpoint";
// Every file this code writes starts with these bytes (dump() is compact and
// "format" is the first member).
constexpr std::string_view kMagic = R"({"format":"ringlab-checkpoint")";

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

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

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
    if (!values[i].is_number())
      damaged(path, where + ": value " + std::to_string(i) + " is not a number");
    t[i] = static_cast<float>(values[i].get<double>());
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

}  // namespace

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path) {
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(system_error("cannot open checkpoint '" + path + "'"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty())
    throw CheckpointError("checkpoint '" + path +
                          "' is empty (0 bytes): it was never written completely");
  if (!text.starts_with(kMagic)) {
    std::string guess;
    if (text.starts_with("PK\x03\x04"))
      guess =
          " (it is a zip archive, as torch.save writes; ringlab reads only its own JSON format)";
    else if (text.size() < kMagic.size() && kMagic.starts_with(text))
      guess =
          " (it is a ringlab checkpoint cut off after " + std::to_string(text.size()) + " bytes)";
    throw CheckpointError("checkpoint '" + path +
                          "' is not a ringlab checkpoint: it does not start with " +
                          std::string(kMagic) + guess);
  }
  Json file;
  try {
    file = Json::parse(text);
  } catch (const Json::parse_error& e) {
    if (e.byte >= text.size())
      throw CheckpointError("checkpoint '" + path + "' is truncated: it ends after " +
                            std::to_string(text.size()) +
                            " bytes in the middle of the data (was its writer killed while "
                            "writing it without a temporary file?)");
    throw CheckpointError("checkpoint '" + path + "' is damaged: not valid JSON at byte " +
                          std::to_string(e.byte) + " of " + std::to_string(text.size()));
  }
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
