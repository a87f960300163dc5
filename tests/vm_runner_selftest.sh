#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/vm must pass the command's exit status through, and must fail a
# run whose guest kernel log holds a warning, or (on the debug kernel) whose
# kmemleak scan finds a leak, even when the command succeeded; a run whose
# guest died must fail and still be summed up.
set -u
vm=$(dirname "$0")/../scripts/vm
fail=0

"$vm" --timeout 300 -- sh -c 'exit 3' > /dev/null 2>&1
rc=$?
[ "$rc" = 3 ] || { echo "FAIL: exit status 3 came back as $rc"; fail=1; }

"$vm" --timeout 300 -- sh -c \
	'echo "WARNING: CPU: 0 PID: 1 at selftest.c:1 fake_warning+0x0/0x10" > /dev/kmsg' \
	> /tmp/vm-selftest.$$ 2>&1
rc=$?
[ "$rc" = 99 ] || { echo "FAIL: a kernel WARNING line gave exit $rc, not 99"; fail=1; }
grep -q "fake_warning" /tmp/vm-selftest.$$ || { echo "FAIL: the warning line was not printed"; fail=1; }
rm -f /tmp/vm-selftest.$$

# A guest that dies before its dmesg is read fails the run, and tests/vm_suite.sh
# still ends with the run's figures, the kernel reports unknown.
suite=$(dirname "$0")/vm_suite.sh
ARCHPMU_VM_TIMEOUT=300 "$suite" stock 2 /tmp/vm-selftest-out.$$ -- \
	sh -c 'echo c > /proc/sysrq-trigger' > /tmp/vm-selftest.$$ 2>&1
rc=$?
[ "$rc" = 125 ] || { echo "FAIL: a guest that panicked gave exit $rc, not 125"; fail=1; }
grep -q "^kernel-reports unknown" /tmp/vm-selftest.$$ ||
	{ echo "FAIL: vm_suite.sh printed no figures for a guest that panicked"; fail=1; }
rm -rf /tmp/vm-selftest.$$ /tmp/vm-selftest-out.$$

# The integration binary names the test case during which the kernel warned.
itest=${1:-}
if [ -n "$itest" ]; then
	"$vm" --timeout 300 -- "$itest" "[kmsg-selftest]" > /tmp/vm-selftest.$$ 2>&1
	grep -q "kernel complained during 'the listener names the test case" /tmp/vm-selftest.$$ ||
		{ echo "FAIL: archpmu_itest did not attribute the warning to its test case"; fail=1; }
	rm -f /tmp/vm-selftest.$$
fi

# On the debug kernel, a leak found by the kmemleak scan fails the run.
top=$(cd "$(dirname "$0")/.." && pwd)
leak=$top/build/kmod-debug/module/test/archpmu_leak.ko
if tree=$("$top/scripts/debug-kernel" --path 2>/dev/null) && [ -f "$leak" ]; then
	"$vm" --timeout 600 --kernel "$tree" --kmemleak -- insmod "$leak" > /tmp/vm-selftest.$$ 2>&1
	rc=$?
	[ "$rc" = 99 ] || { echo "FAIL: a leaking module gave exit $rc, not 99"; fail=1; }
	grep -q "kmemleak found unreferenced objects" /tmp/vm-selftest.$$ ||
		{ echo "FAIL: the kmemleak report was not printed"; fail=1; }
	rm -f /tmp/vm-selftest.$$
else
	echo "FAIL: no debug kernel and build/kmod-debug (make check builds them)"
	fail=1
fi

[ "$fail" = 0 ] && echo "vm runner self-test passed"
exit "$fail"
