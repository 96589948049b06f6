#!/bin/sh
# Builds native/build/Release/warehouse_native.node with cmake-js. Run by `npm ci` (the
# package's install script) and by hand after changing C++ sources. Needs no network:
# native/package.json marks the addon Node-API only, so cmake-js takes its headers from the
# node-api-headers and node-addon-api packages instead of downloading Node's.
set -eu

root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
cd "$root"

cmake_js=node_modules/.bin/cmake-js
if [ ! -x "$cmake_js" ]; then
  echo "native/build.sh: $cmake_js is missing; run 'npm ci' first" >&2
  exit 1
fi
if ! command -v cmake >/dev/null 2>&1; then
  echo "native/build.sh: cmake is missing; install cmake and a C++20 compiler (Debian: apt-get install cmake g++)" >&2
  exit 1
fi

# CMake refuses a cache written for another source directory (a moved or copied checkout):
# start that one afresh rather than fail.
cache=native/build/CMakeCache.txt
if [ -f "$cache" ] && ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$root/native" "$cache"; then
  rm -rf native/build
fi

jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
exec "$cmake_js" build --directory native --out native/build --parallel "$jobs"
