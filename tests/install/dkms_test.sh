#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# DKMS builds the module from `make dkms`'s sources against the installed
# kernel headers and Debian 12's backports kernel's (Debian's dkms, in trees of this test's own: nothing is
# added to the system's DKMS), the module carries module/version.h's version, and it has none of the
# tests' commands or parameters even when ARCHPMU_TEST=1 is in the environment of whoever runs dkms.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=$(sed -n 's/^#define ARCHPMU_VERSION "\(.*\)"/\1/p' "$top/module/version.h")
grep -qx "PACKAGE_VERSION=\"$version\"" "$top/dkms.conf" ||
	{ echo "dkms.conf's PACKAGE_VERSION is not module/version.h's $version"; exit 1; }
stock=$(ls -d /lib/modules/*/build 2>/dev/null | grep -v -- '-rt-' | sort -V | tail -n 1)
[ -n "$stock" ] || { echo "dkms test: no kernel headers (scripts/install-deps)"; exit 1; }
# And Debian 12's backports kernel (6.12), whose headers are where
# scripts/matrix-kernel put them: dkms's --kernelsourcedir.
eval "$("$top/scripts/matrix-kernel" backports)"
# shellcheck disable=SC2154 # kver and kdir come from matrix-kernel
builds=("$(basename "$(dirname "$stock")") $stock" "$kver $kdir")

make -C "$top" -s dkms DESTDIR="$work/root" > /dev/null
src=$work/root/usr/src
[ -f "$src/archpmu-$version/dkms.conf" ] || { echo "make dkms: no sources in $src"; exit 1; }
[ ! -e "$src/archpmu-$version/module/test" ] || { echo "make dkms: the test modules came along"; exit 1; }
mkdir -p "$work/dkms"
trees=(--sourcetree "$src" --dkmstree "$work/dkms")
dkms add -m archpmu -v "$version" "${trees[@]}" > "$work/log" 2>&1 || { cat "$work/log"; exit 1; }
for b in "${builds[@]}"; do
	kver=${b%% *} kdir=${b#* }
	if ! ARCHPMU_TEST=1 dkms build -m archpmu -v "$version" -k "$kver" --kernelsourcedir "$kdir" "${trees[@]}" \
		> "$work/log" 2>&1; then
		cat "$work/log"
		find "$work/dkms" -name make.log -exec cat {} \;
		exit 1
	fi
	ko=$(find "$work/dkms/archpmu/$version/$kver" -name archpmu.ko | head -n 1)
	[ -n "$ko" ] || { echo "dkms build made no archpmu.ko for $kver"; cat "$work/log"; exit 1; }
	[ "$(modinfo -F version "$ko")" = "$version" ] || { echo "the DKMS module's version is not $version"; exit 1; }
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] || { echo "built for the wrong kernel"; exit 1; }
	if modinfo -F parm "$ko" | grep -q '^test_'; then
		echo "the DKMS module for $kver was built for the tests (ARCHPMU_TEST=1 from the environment):"
		modinfo -F parm "$ko"
		exit 1
	fi
	echo "dkms test: dkms build against $kver headers made archpmu.ko $version"
done
echo "dkms test passed"
