#!/usr/bin/env bash
# Installs what ringlab builds with, from Debian 12's packages. Run as root.
# Skips apt when everything is already there.
set -euo pipefail
# make: CMake's default generator on Linux, which README's "Writing a program"
# recipe (`cmake -S . -B build ...`) uses; tests/test_install.sh runs that recipe.
packages=(cmake make g++ ninja-build ccache pkg-config
          doctest-dev libboost-dev libcli11-dev nlohmann-json3-dev libssl-dev
          libimgui-dev libglfw3-dev libgl-dev xvfb xauth fonts-dejavu-core
          iproute2
          python3-dev pybind11-dev   # the Python package (python/)
          python3-torch              # its tests and the c10d store tests only
          clang-14 libfuzzer-14-dev libclang-rt-14-dev)  # tools/fuzz.sh
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
