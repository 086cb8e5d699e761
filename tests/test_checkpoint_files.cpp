// Checkpoints against diverged training and hostile files (issue 21, items
// 2, 3 and 5): a NaN or an infinity is never saved over a good checkpoint; a
// step that diverges stops with the rank, step and parameter; loading names
// the file and the entry of a number that does not fit a float32, takes
// pretty-printed JSON, and refuses folders, devices, FIFOs and files past
// the size bound without hanging.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "file_test_support.hpp"
#include "training/checkpoint.hpp"
#include "training/finite.hpp"
#include "training/init.hpp"
#include "training/module.hpp"
#include "training/sgd.hpp"

using namespace ringlab::training;
using namespace ringlab::testing;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A small model, its optimizer after one step (so it has momentum buffers)
// and the checkpoint of both.
struct Trained {
  ToyModel model;
  SGD sgd{model.parameters(), {.lr = 0.01, .momentum = 0.9}};
  Trained() {
    Generator g(7);
    init_toy_model(model, g);
    for (Parameter* p : model.parameters()) p->grad.fill(0.5f);
    sgd.step();
  }
  Checkpoint checkpoint(std::int64_t epoch) {
    return {.model = model.state_dict(), .optimizer = sgd.state_dict(), .epoch = epoch};
  }
};

// The saved checkpoint's JSON with `edit` applied, written to `path`.
void edited(const std::string& saved, const std::string& path,
            const std::function<void(nlohmann::ordered_json&)>& edit, int indent = -1) {
  auto json = nlohmann::ordered_json::parse(contents(saved));
  edit(json);
  put(path, json.dump(indent));
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace

TEST_SUITE("checkpoint_files") {
  TEST_CASE("a NaN or an infinity is not saved, and the last good checkpoint stays whole") {
    Folder folder;
    const std::string path = folder / "c.pt";
    Trained t;
    save_checkpoint(t.checkpoint(3), path);
    const std::string good = contents(path);
    const auto refused = [&](const Checkpoint& bad, const std::string& where) {
      const std::string error = error_of([&] { save_checkpoint(bad, path); });
      INFO(error);
      CHECK(contains(error, "cannot save checkpoint '" + path + "': " + where));
      CHECK(contains(error, "nothing was written"));
      CHECK(contents(path) == good);
      CHECK(load_checkpoint(path).epoch == 3);
    };
    Checkpoint bad = t.checkpoint(4);
    bad.model[2].value[7] = kNaN;
    refused(bad, "entry 'net2.weight' value 7 is nan");
    bad = t.checkpoint(4);
    bad.model[0].value[0] = -kInf;
    refused(bad, "entry 'net1.weight' value 0 is -inf");
    bad = t.checkpoint(4);
    (*bad.optimizer->momentum_buffers[1])[3] = kInf;
    refused(bad, "the momentum buffer of parameter 1 value 3 is inf");
    bad = t.checkpoint(4);
    bad.optimizer->options.lr = std::numeric_limits<double>::quiet_NaN();
    refused(bad, "the optimizer's lr is nan");
    CHECK(temporaries_left(folder.path, "c.pt") == 0);
  }

  TEST_CASE("a step that diverges names the rank, the step and the parameter") {
    ToyModel model;
    Generator g(1);
    init_toy_model(model, g);
    const StepPlace where{.rank = 1, .step = "epoch 3", .lr = 1000};
    CHECK_NOTHROW(check_step(where, 0.25f, model.named_parameters()));
    model.net2().bias.value[2] = kNaN;
    model.net1().weight.value[5] = kInf;
    const std::string error = error_of([&] { check_step(where, kInf, model.named_parameters()); });
    CHECK(error ==
          "rank 1, epoch 3: training diverged: element 5 of net1.weight is inf after the step "
          "(and 1 other parameter is not finite; the loss was inf, lr 1000): training stops "
          "here and saves nothing, so the last checkpoint stays as it was; train again with a "
          "smaller learning rate");
    model.net1().weight.value[5] = 0;
    model.net2().bias.value[2] = 0;
    CHECK(contains(error_of([&] { check_step(where, kNaN, model.named_parameters()); }),
                   "rank 1, epoch 3: training diverged: the loss is nan (lr 1000)"));
    CHECK_THROWS_AS(check_step(where, kNaN, model.named_parameters()), DivergedError);
  }

  TEST_CASE("a value that does not fit a float32 names the file and the entry") {
    Folder folder;
    const std::string saved = folder / "good.pt", path = folder / "bad.pt";
    Trained t;
    save_checkpoint(t.checkpoint(1), saved);
    // 1e39 is a double but past float32's largest (3.40282347e+38): it
    // loaded as inf.
    edited(saved, path, [](auto& j) { j["model"]["net1.bias"]["values"][4] = 1e39; });
    CHECK(error_of([&] { load_checkpoint(path); }) ==
          "checkpoint '" + path +
              "' is damaged: entry 'net1.bias': value 4 is 1e+39, outside float32's range (the "
              "largest float32 is 3.40282347e+38)");
    // 1e999 is past a double's: the JSON parser's own "number overflow".
    std::string text = contents(saved);
    const std::size_t values = text.find("\"values\":[", text.find("\"net2.weight\"")) + 10;
    text.replace(values, text.find(',', values) - values, "1e999");
    put(path, text);
    CHECK(error_of([&] { load_checkpoint(path); }) ==
          "checkpoint '" + path +
              "' is damaged: entry 'net2.weight': value 0 is 1e999, outside float32's range (the "
              "largest float32 is 3.40282347e+38)");
    text = contents(saved);
    const std::size_t lr = text.find("\"lr\":") + 5;
    text.replace(lr, text.find(',', lr) - lr, "-2e400");
    put(path, text);
    CHECK(contains(error_of([&] { load_checkpoint(path); }),
                   "' is damaged: the value at /optimizer/param_groups/0/lr is -2e400"));
    // A diverged run's file as the issue found it: null where NaN was.
    edited(saved, path, [](auto& j) { j["model"]["net1.weight"]["values"][0] = nullptr; });
    CHECK(contains(error_of([&] { load_checkpoint(path); }),
                   "entry 'net1.weight': value 0 is null, not a number (JSON writers save NaN "
                   "and infinity as null"));
  }

  TEST_CASE("pretty-printed JSON is read, members in any order; other JSON is named") {
    Folder folder;
    const std::string saved = folder / "good.pt", path = folder / "pretty.pt";
    Trained t;
    save_checkpoint(t.checkpoint(9), saved);
    edited(
        saved, path,
        [](auto& j) {
          const auto format = j["format"];
          j.erase("format");
          j["format"] = format;  // last, not first
        },
        2);
    REQUIRE(contents(path).starts_with("{\n  \"version\": 1"));
    const Checkpoint a = load_checkpoint(saved), b = load_checkpoint(path);
    CHECK(b.epoch == 9);
    REQUIRE(a.model.size() == b.model.size());
    for (std::size_t e = 0; e < a.model.size(); ++e)
      for (std::size_t i = 0; i < a.model[e].value.numel(); ++i)
        CHECK(a.model[e].value[i] == b.model[e].value[i]);
    CHECK(b.optimizer->options.momentum == 0.9);
    put(path, "  {\"weights\": [1, 2, 3]}\n");
    CHECK(error_of([&] { load_checkpoint(path); }) ==
          "checkpoint '" + path +
              "' is not a ringlab checkpoint: it is JSON without a \"format\" member; ringlab "
              "reads only the JSON checkpoints it writes (training/checkpoint.hpp): give the "
              "path of one");
    put(path, "{\"format\": \"onnx\"}");
    CHECK(contains(error_of([&] { load_checkpoint(path); }),
                   "its \"format\" is \"onnx\", not \"ringlab-checkpoint\""));
  }

  TEST_CASE("a folder, a device, a FIFO or an oversized file in its place is refused at once") {
    Folder folder;
    CHECK(error_of([&] { load_checkpoint(folder.path.string()); }) ==
          "cannot read checkpoint '" + folder.path.string() +
              "': it is a folder, not a file: give the path of a checkpoint file (inside it, "
              "perhaps)");
    const std::string fifo = folder / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    for (const std::string& path : {std::string("/dev/zero"), fifo}) {
      CAPTURE(path);
      // Before: reading /dev/zero filled the memory, and a FIFO blocked.
      const std::string error = error_within(10, [&] { load_checkpoint(path); });
      INFO(error);
      CHECK(contains(error, "cannot read checkpoint '" + path + "': it is a "));
      CHECK(contains(error, "not a regular file"));
    }
    // A sparse file one byte past the bound: refused without reading it.
    const std::string huge = folder / "huge.pt";
    put(huge, "");
    REQUIRE(::truncate(huge.c_str(), static_cast<off_t>(kMaxCheckpointBytes + 1)) == 0);
    CHECK(contains(error_within(10, [&] { load_checkpoint(huge); }),
                   "it is 268435457 bytes (256 MiB), more than the 268435456 bytes (256 MiB) a "
                   "checkpoint may be"));
  }
}
