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
# The installed header's ABI version, which must be the tree's.
abi=$(sed -n 's/^#define ARCHPMU_ABI_VERSION[[:space:]]*\([0-9]*\)$/\1/p' "$here/../../uapi/archpmu.h")
[ -n "$abi" ]
expected="errno 2 abi $abi"
out=$(LD_LIBRARY_PATH=$libdir "$work/consumer-pc")
[ "$out" = "$expected" ] || { echo "consumer-pc printed '$out', not '$expected'" >&2; exit 1; }

# The exported target carries the C++17 requirement.
grep -q 'INTERFACE_COMPILE_FEATURES "cxx_std_17"' "$libdir/cmake/archpmu/archpmuTargets.cmake"
cmake -S "$here" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/cmake-build" > /dev/null
out=$(LD_LIBRARY_PATH=$libdir "$work/cmake-build/consumer")
[ "$out" = "$expected" ] || { echo "consumer printed '$out', not '$expected'" >&2; exit 1; }

# examples/ build against the installed package as any program would, and say
# what is wrong where there is no module (the VM suite runs them on the model).
cmake -S "$here/../../examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$work/prefix" \
	-DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" > /dev/null
cmake --build "$work/examples" > /dev/null
for example in count_region sample_function watch_events; do
	test -x "$work/examples/$example"
done
if out=$(LD_LIBRARY_PATH=$libdir "$work/examples/count_region" 2>&1); then
	echo "count_region ran without a module: $out" >&2
	exit 1
fi
grep -q "^count_region: cannot open /dev/archpmu" <<< "$out"

# The installed API: no tool formatting, nothing of archpmu::detail.
for header in stat_format.hpp stat_report.hpp report.hpp; do
	if [ -e "$work/prefix/include/archpmu/$header" ]; then
		echo "the tool's $header is installed" >&2
		exit 1
	fi
done
exported=$(nm -DC --defined-only "$libdir"/libarchpmu.so)
if grep -E 'archpmu::detail::|stat_report|info_table|registers_table|notice_line' <<< "$exported"; then
	echo "libarchpmu.so exports the symbols above, which are not its API" >&2
	exit 1
fi
echo "install test passed: pkg-config and find_package(archpmu) consumers and examples/ build and run; only the API is installed and exported"
