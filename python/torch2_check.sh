#!/usr/bin/env bash
# The PyTorch 2.x half of the bridge's checks, for a machine with torch 2.x
# (this project's machines have Debian's torch 1.13 only, docs/pytorch.md):
#
#   1. builds the extension ringlab._ringlab there, with that Python and the
#      pybind11 headers torch bundles (torch/include), against a ringlab build
#      made elsewhere (BUILD_DIR: its libringlab_*.a, position-independent;
#      no CMake, Boost or pybind11 package needed);
#   2. runs the c10d client against that torch's own TCPStore servers (its
#      default and, where it has one, the classic server);
#   3. runs tests/python/test_backend.py (every collective against gloo),
#      tests/python/test_dropin.py's user scripts on gloo and on ringlab, and
#      each program of examples/python/ on gloo and on ringlab, under mp.spawn
#      and under `ringlab run`, comparing what they print;
#   4. runs ringlab's lessons under that torch's torchrun (its agent store).
#
# Usage: python/torch2_check.sh SOURCE_DIR BUILD_DIR [PYTHON]
#   SOURCE_DIR  this tree (for the headers, the package's .py files, the tests)
#   BUILD_DIR   a build of it: cmake -S SOURCE_DIR -B BUILD_DIR -G Ninja &&
#               cmake --build BUILD_DIR --target ringlab c10d_client_tool
#               ringlab_backends (made on any x86-64 Linux with glibc no newer
#               than this machine's)
#   PYTHON      the interpreter with torch 2.x (default: python3)
# Prints PASS or FAIL per step and exits non-zero if any failed.
set -uo pipefail

source=$(cd "${1:?usage: torch2_check.sh SOURCE_DIR BUILD_DIR [PYTHON]}" && pwd)
build=$(cd "${2:?usage: torch2_check.sh SOURCE_DIR BUILD_DIR [PYTHON]}" && pwd)
python=${3:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/ringlab-torch2-XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

step() {  # step NAME COMMAND...: runs it, keeps its output, says PASS or FAIL
  local name=$1
  shift
  if "$@" > "$work/$name.log" 2>&1; then
    echo "PASS  $name"
  else
    echo "FAIL  $name (exit $?); its output:"
    sed 's/^/      /' "$work/$name.log" | tail -40
    failed=1
  fi
}

"$python" -c "import torch; print('torch', torch.__version__, 'python', __import__('sys').version.split()[0])" ||
  { echo "FAIL: $python cannot import torch"; exit 1; }

# ---- 1. the extension ---------------------------------------------------------------
package=$work/python
mkdir -p "$package/ringlab"
cp "$source"/python/ringlab/*.py "$package/ringlab/"
suffix=$("$python" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
torch_include=$("$python" -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'include'))")
python_include=$("$python" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
mapfile -t libraries < <(find "$build" -name 'libringlab_*.a' -not -path '*/tests/*')
((${#libraries[@]})) || { echo "FAIL: no libringlab_*.a under $build"; exit 1; }
step build "${CXX:-g++}" -std=c++20 -O2 -shared -fPIC -fvisibility=hidden \
  -I"$source" -I"$torch_include" -I"$python_include" \
  "$source/python/module.cpp" "$source/python/bridge_group.cpp" "$source/python/python_store.cpp" \
  -Wl,--start-group "${libraries[@]}" -Wl,--end-group -lcrypto -pthread \
  -o "$package/ringlab/_ringlab$suffix"
step import env PYTHONPATH="$package" "$python" -c "import ringlab.torch, torch.distributed as d; print(d.Backend._plugins.keys())"

export PYTHONPATH=$package
tests=$source/tests/python
ringlab=$build/tools/ringlab
# ---- 2. the c10d client against this torch's servers ----------------------------------
step c10d_client "$python" "$tests/test_c10d_client.py" "$build/tests/c10d_client_tool" torch
# ---- 3. collectives and the articles' programs -----------------------------------------
step backend "$python" "$tests/test_backend.py"
step features "$python" "$tests/test_features.py" "$ringlab" "$source/examples/python"
for example in p2p broadcast scatter gather reduce all_gather all_reduce reduce_scatter \
               all_to_all barrier ddp_init_broadcast ddp_grad_average ddp_tutorial; do
  step "example_$example" "$python" "$tests/test_examples.py" "$ringlab" "$source/examples/python" "$example"
done
# A user's scripts on gloo and on ringlab (issue 32's cases). Where a case
# says what Gloo does (it aborts, returns wrong values, sums sparse tensors:
# measured on 1.13), a newer Gloo that does otherwise fails the case, saying
# so: read its log before reading it as ringlab's failure.
for case in $("$python" "$tests/test_dropin.py" --list); do
  step "dropin_$case" "$python" "$tests/test_dropin.py" "$case"
done
# ---- 4. ringlab's ranks under this torch's torchrun ------------------------------------
for case in agent4 agent2 standalone mismatch bench python; do
  step "torchrun_$case" "$python" "$tests/test_torchrun.py" "$ringlab" "$source/examples/python" "$case"
done

# The side-by-side outputs, for the record.
for example in all_reduce reduce ddp_grad_average ddp_tutorial; do
  echo "---- $example"
  grep -v '^---- ' "$work/example_$example.log" | head -30
done
exit $failed
