#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make install DESTDIR=... PREFIX=/usr` lays out every file it promises, from
# a build without the tests, and the tool, the library and the module all
# carry module/version.h's version.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root

make -C "$top" -s install DESTDIR="$root" PREFIX=/usr INSTALL_BUILD="$work/build" > "$work/log" 2>&1 ||
	{ cat "$work/log"; exit 1; }
version=$(sed -n 's/^#define ARCHPMU_VERSION "\(.*\)"/\1/p' "$top/module/version.h")
# The kernel the module was built for: the one directory under lib/modules.
kver=$(ls "$root/lib/modules" 2>/dev/null | head -n 1)
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

missing=0
for f in usr/bin/archpmu \
	"usr/lib/$arch/libarchpmu.so.${version%%.*}" "usr/lib/$arch/libarchpmu.a" \
	"usr/lib/$arch/pkgconfig/archpmu.pc" \
	"usr/lib/$arch/cmake/archpmu/archpmuConfig.cmake" \
	"usr/lib/$arch/cmake/archpmu/archpmuConfigVersion.cmake" \
	"usr/lib/$arch/cmake/archpmu/archpmuTargets.cmake" \
	usr/include/archpmu/session.hpp usr/include/archpmu/uapi/archpmu.h \
	usr/include/archpmu/uapi/archpmu_netlink.h \
	usr/share/man/man1/archpmu.1 usr/share/man/man1/archpmu-info.1 usr/share/man/man1/archpmu-list.1 \
	usr/share/man/man1/archpmu-stat.1 usr/share/man/man1/archpmu-record.1 \
	usr/share/man/man1/archpmu-selftest.1 \
	usr/share/man/man4/archpmu.4 \
	usr/share/bash-completion/completions/archpmu \
	usr/share/man/man1/archpmu-exporter.1 \
	usr/lib/systemd/system/archpmu-exporter.service usr/lib/sysusers.d/archpmu.conf \
	"lib/modules/$kver/extra/archpmu.ko" etc/udev/rules.d/99-archpmu.rules; do
	[ -e "$root/$f" ] || { echo "make install: $f is missing"; missing=1; }
done
[ "$missing" = 0 ] || { find "$root" -type f | sort; exit 1; }
# The exporter's unit: systemd takes it (its ExecStart pointed at the staged tool),
# and its hardening keeps systemd's exposure score at 2.5 or below ("OK").
unit=$work/archpmu-exporter.service
sed "s#^ExecStart=/usr/bin/archpmu#ExecStart=$root/usr/bin/archpmu#" \
	"$root/usr/lib/systemd/system/archpmu-exporter.service" > "$unit"
grep -q "^ExecStart=$root/usr/bin/archpmu exporter" "$unit" || { echo "unit: ExecStart"; exit 1; }
command -v systemd-analyze > /dev/null || { echo "no systemd-analyze to check the unit"; exit 1; }
systemd-analyze verify --man=no "$unit" || { echo "systemd-analyze verify failed"; exit 1; }
systemd-analyze security --offline=true --threshold=25 "$unit" > "$work/security" 2>&1 ||
	{ tail -n 3 "$work/security"; echo "the exporter's unit is exposed over 2.5"; exit 1; }
# Nothing of the tests was built or installed.
[ ! -e "$work/build/tests" ] || { echo "make install built the tests"; exit 1; }
if find "$root" -name '*itest*' -o -name 'archpmu_hog*' -o -name 'archpmu_leak*' | grep -q .; then
	echo "make install installed test files"
	exit 1
fi
# The installed module has no test-only command (uapi/archpmu_test.h), and the
# tree's own module, which the tests load, still has them.
ko=$root/lib/modules/$kver/extra/archpmu.ko
if grep -q archpmu_ioc_model <<<"$(nm "$ko")"; then
	echo "make install installed a module with the test-only commands"
	exit 1
fi
# Whole listings into grep: grep -q would quit early, and pipefail would take
# nm's SIGPIPE for a missing symbol.
tree_symbols=$(nm "$top/module/archpmu.ko")
grep -q archpmu_ioc_model_msr <<<"$tree_symbols" ||
	{ echo "make install rebuilt the tree's module without the test-only commands"; exit 1; }
# One version: the tool, the module's modinfo, the pkg-config file, the man pages.
tool_version=$(LD_LIBRARY_PATH="$root/usr/lib/$arch" "$root/usr/bin/archpmu" --version)
[ "$tool_version" = "archpmu version $version" ] || { echo "tool: $tool_version"; exit 1; }
ko_version=$(modinfo -F version "$root/lib/modules/$kver/extra/archpmu.ko")
[ "$ko_version" = "$version" ] || { echo "modinfo: $ko_version, not $version"; exit 1; }
grep -qx "Version: $version" "$root/usr/lib/$arch/pkgconfig/archpmu.pc"
grep -q "\"archpmu $version\"" "$root/usr/share/man/man1/archpmu-stat.1"
echo "make install test passed: every file under DESTDIR, no tests, no test-only commands, version $version everywhere"
