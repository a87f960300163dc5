#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm_suite.sh KERNEL NCPU OUTDIR -- COMMAND...: run COMMAND (the
# integration suite) in the VM on one of the kernels archpmu is tested on:
#   stock  Debian's kernel, with the module of the main build
#   debug  the KASAN/lockdep/kmemleak/UBSAN/fault-injection kernel of
#          scripts/debug-kernel, with the module built against it
#          (build/kmod-debug) and a kmemleak scan after the run
#   rt     Debian's PREEMPT_RT kernel, with build/kmod-rt
#   backports, newest
#          the kernels of scripts/matrix-kernel (Debian's 6.12 for bookworm,
#          the newest Debian ships), with build/kmod-backports, kmod-newest
# `make check` fetches the matrix kernels and builds every module first.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kind=$1 ncpu=$2 out=$3
shift 3
[ "${1:-}" = -- ] && shift
# A run that ends early must not leave the last run's figures behind.
rm -f "$out/kernel-reports" "$out/kmemleak" "$out/reliability.txt"
kmods=${ARCHPMU_KMOD_ROOT:-$top/build}
# A run takes 4-9 minutes; a hung one is cut short (the guest prints where
# it hangs a minute before), so that CI still ends.
case "$kind" in debug) limit=1500 ;; *) limit=900 ;; esac
args=(--cpus "$ncpu" --timeout "${ARCHPMU_VM_TIMEOUT:-$limit}" --out "$out")
# Only the debug kernel has fail-nth and failslab.
# Hidden tests ([.]) are the runner's own checks; a spec of exclusions alone would run them.
case "$kind" in debug) set -- "$@" '~[.]' ;; *) set -- "$@" '~[.]~[fault-injection]' ;; esac
# The exporter's load and Prometheus tests try the daemon, and [userspace] tests the
# tools' output, files and exit statuses, not the kernel: on the stock kernel at
# 2 CPUs only.
[ "$kind:$ncpu" = stock:2 ] || set -- "$@" '~[load]~[prometheus]~[userspace]'
case "$kind" in
stock) ;;
debug)
	tree=$("$top/scripts/debug-kernel" --path) ||
		{ echo "vm_suite: no debug kernel: run 'make check' (it builds one)" >&2; exit 125; }
	export ARCHPMU_KO=$kmods/kmod-debug/module/archpmu.ko
	args+=(--kernel "$tree" --kmemleak -e ARCHPMU_KO)
	;;
rt)
	rt=$(ls -d /lib/modules/*-rt-*/build 2>/dev/null | sort -V | tail -n 1 || true)
	[ -n "$rt" ] || { echo "vm_suite: no RT kernel: run scripts/install-deps" >&2; exit 125; }
	rt=${rt%/build}
	export ARCHPMU_KO=$kmods/kmod-rt/module/archpmu.ko
	args+=(--kver "${rt##*/}" -e ARCHPMU_KO)
	;;
backports|newest)
	paths=$("$top/scripts/matrix-kernel" --path "$kind") ||
		{ echo "vm_suite: no $kind kernel: run 'make check' (it fetches one)" >&2; exit 125; }
	eval "$paths"
	# shellcheck disable=SC2154 # kver and root come from matrix-kernel
	args+=(--root "$root" --kver "$kver" -e ARCHPMU_KO)
	export ARCHPMU_KO=$kmods/kmod-$kind/module/archpmu.ko
	;;
*) echo "vm_suite: unknown kernel '$kind' (stock, debug, rt, backports or newest)" >&2; exit 2 ;;
esac
if [ -n "${ARCHPMU_KO:-}" ] && [ ! -f "$ARCHPMU_KO" ]; then
	echo "vm_suite: $ARCHPMU_KO is missing: run 'make check' (it builds it)" >&2
	exit 125
fi
# The run, then its figures for the Reliability table (docs/testing.md): the
# "reliability: NAME VALUE" lines the suite prints, added up, and the count
# of kernel reports (WARNING, BUG, KASAN, lockdep, UBSAN, leaks) it caused.
mkdir -p "$out"
set +e
"$top/scripts/vm" "${args[@]}" -- "$@" 2>&1 | tee "$out/console.log"
rc=${PIPESTATUS[0]}
set -e
{
	echo "run $kind $ncpu exit $rc"
	sed -n 's/^reliability: //p' "$out/console.log" |
		awk '{ sum[$1] += $2 } END { for (k in sum) printf "%s %d\n", k, sum[k] }' | sort
	# The runner writes kernel-reports from the guest's dmesg; a guest that died
	# before its dmesg was read leaves none, and its count is unknown.
	if [ -f "$out/kernel-reports" ]; then
		reports=$(wc -l < "$out/kernel-reports")
		leaks=$(grep -c 'unreferenced object' "$out/kmemleak" 2>/dev/null || true)
		echo "kernel-reports $(( reports + ${leaks:-0} ))"
	else
		echo "kernel-reports unknown (no dmesg from the guest)"
	fi
} > "$out/reliability.txt"
cat "$out/reliability.txt"
# Last, so that a log cut to its head and tail still names what failed: each
# failed test case's block of the Catch2 report, the assertion with it.
if [ "$rc" != 0 ]; then
	echo "failed test cases (full log: $out/console.log):"
	# Its exit status is not the run's: head's early exit SIGPIPEs awk.
	{ awk 'function flush() { if (bad) printf "%s", block; block = ""; bad = 0 }
	     /^-+$/ && length($0) > 70 { if (!header) flush(); header = !header }
	     /^=+$/ && length($0) > 70 { flush(); header = 0 }
	     { block = block $0 "\n" }
	     / FAILED:$|failed with|due to unexpected exception/ { bad = 1 }' "$out/console.log" |
		grep -v '^\[ *[0-9.]*\] ' | head -n 120; } || true
fi
exit "$rc"
