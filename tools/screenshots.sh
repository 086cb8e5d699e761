#!/usr/bin/env bash
# Regenerates every image in docs/images from the current build, so that
# README's pictures of the GUI show what the GUI draws today.
#
#   bash tools/screenshots.sh [BUILD_DIR [OUT_DIR]]    (build, docs/images)
#
# Runs itself under `xvfb-run -a` where there is no display. Fails, naming
# the image, when one cannot be made, and when docs/images holds an image this
# list does not make (add it here, or delete it).
set -euo pipefail
script=$(realpath "$0")
cd "$(dirname "$script")/.."   # BUILD_DIR and OUT_DIR are relative to the tree's root

build=${1:-build}
out=${2:-docs/images}
exe=$build/tools/ringlab

# file, scenario, frame[, ranks]: at the GUI's default window size, 1280x800.
shots=(
  "ring_allreduce.png ring_allreduce 3"     # README: "step 3 of 6"
  "scatter_gather.png scatter_gather 3"     # the gather, 3 messages into rank 0
  "parameter_server.png parameter_server 12" # a pull answered, a push applied
  "ddp_step.png ddp_step 4"                 # backward of net2 while bucket 0's all_reduce runs
  "all_to_all_16.png all_to_all 4 16"       # the overview: rank 4 receives rank 0's block 4
  "ddp_step_16.png ddp_step 4 16"           # the overview as a ring: rank 2 adds rank 1's chunk
)

if [[ ! -x $exe ]]; then
  echo "screenshots: $exe is missing; build first (bash tools/build.sh)" >&2
  exit 1
fi
if ! "$exe" gui --help > /dev/null 2>&1; then
  echo "screenshots: $exe was built without the GUI (bash tools/deps.sh installs what it needs)" >&2
  exit 1
fi
if [[ -z ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} ]]; then
  if ! command -v xvfb-run > /dev/null; then
    echo "screenshots: no display and no xvfb-run (Debian: apt-get install xvfb xauth)" >&2
    exit 1
  fi
  exec xvfb-run -a bash "$script" "$build" "$out"
fi

mkdir -p "$out"
made=()
for shot in "${shots[@]}"; do
  read -r file scenario frame ranks <<< "$shot"
  world=()
  [[ -n $ranks ]] && world=(--ranks "$ranks")
  # Written next to its place, then renamed: a failed run leaves the old
  # image whole.
  temp=$out/.$file.tmp.png
  if ! "$exe" gui --scenario "$scenario" "${world[@]}" --step "$frame" --width 1280 --height 800 \
      --screenshot "$temp" > /dev/null; then
    rm -f "$temp"
    echo "screenshots: could not make $out/$file ($scenario, frame $frame)" >&2
    exit 1
  fi
  mv -f "$temp" "$out/$file"
  echo "made $out/$file ($scenario, frame $frame)"
  made+=("$file")
done

# A real run replayed: the all_reduce lesson's ranks as processes over tcp,
# traced, then opened from its trace (`ringlab gui --trace`), at step 3.
real=replayed_all_reduce.png
trace_dir=$(mktemp -d)
trap 'rm -rf "$trace_dir"' EXIT
temp=$out/.$real.tmp.png
if ! "$exe" lesson all_reduce -n 4 --trace "$trace_dir/run.json" > /dev/null 2>&1 ||
   ! "$exe" gui --trace "$trace_dir/run.json" --step 3 --width 1280 --height 800 \
      --screenshot "$temp" > /dev/null; then
  rm -f "$temp"
  echo "screenshots: could not make $out/$real (lesson all_reduce --trace, then gui --trace)" >&2
  exit 1
fi
mv -f "$temp" "$out/$real"
echo "made $out/$real (a real run's trace, frame 3)"
made+=("$real")

status=0
for image in "$out"/*.png; do
  name=$(basename "$image")
  if [[ ! " ${made[*]} " == *" $name "* ]]; then
    echo "screenshots: $image is not made by tools/screenshots.sh; add it to the list or delete it" >&2
    status=1
  fi
done
exit $status
