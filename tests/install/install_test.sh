#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install into a scratch prefix, then build consumer.cpp through pkg-config
# and through find_package(archpmu): both must link and run.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > /dev/null
libdir=$(ls -d "$work"/prefix/lib*/ | head -n 1)

export PKG_CONFIG_PATH=$libdir/pkgconfig
g++ -std=c++17 -Wall -Werror "$here/consumer.cpp" -o "$work/consumer-pc" $(pkg-config --cflags --libs archpmu)
LD_LIBRARY_PATH=$libdir "$work/consumer-pc" | grep -qx "errno 2 abi 1"

# The exported target carries the C++17 requirement.
grep -q 'INTERFACE_COMPILE_FEATURES "cxx_std_17"' "$libdir/cmake/archpmu/archpmuTargets.cmake"
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/cmake-build" > /dev/null
LD_LIBRARY_PATH=$libdir "$work/cmake-build/consumer" | grep -qx "errno 2 abi 1"
echo "install test passed: pkg-config and find_package(archpmu) (archpmu::archpmu) consumers build and run"
