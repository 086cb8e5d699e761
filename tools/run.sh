#!/usr/bin/env bash
# Builds everything and runs the main job (`ringlab start`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
exec ./build/tools/ringlab start "$@"
