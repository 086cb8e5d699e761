#!/usr/bin/env bash
# Builds everything and runs the main job (`ringlab start`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
# From the build folder: what the tour writes (the horovod lesson keeps its
# checkpoints in the current folder) stays out of the source tree.
cd build
exec ./tools/ringlab start "$@"
