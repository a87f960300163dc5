#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/vm_hold_tracepoints.sh COMMAND...: run COMMAND (the integration suite)
# in the guest with two probes already on each scheduler tracepoint archpmu's
# task sessions use, so that archpmu's own registration changes no kernel text.
#
# Why: registering the first or second probe on a tracepoint live-patches the
# call site (text_poke_bp: int3, then IPIs to every CPU). Under QEMU's TCG with
# more vCPUs than host cores, that patch was seen to hang the guest: the other
# vCPUs loop in the int3 handler at a site patched a moment before while the
# patching CPU waits for them forever (RCU stall, soft lockup). A third probe
# patches nothing (kernel/tracepoint.c: N->N+1 for N>1 only swaps the array).
#
# tests/vm_suite.sh boots the 4-vCPU runs with
# trace_event=sched:sched_switch,sched:sched_process_fork,sched:sched_process_exec,
# which enables the three events before the other CPUs start, where patching
# is done in place (text_poke_early); sched_switch gets its second probe there
# too (record-cmd). Here, before the suite, the same events in a trace instance
# give fork and exec their second probe: two patches a boot instead of several
# a test. Nothing is recorded (tracing_on 0). The 2-vCPU runs do none of this,
# so archpmu's first registration, with its live patch, is still tested there.
set -eu
t=/sys/kernel/tracing
[ -d "$t/events" ] || mount -t tracefs nodev "$t"
mkdir -p "$t/instances/archpmu-hold"
for event in sched_switch sched_process_fork sched_process_exec; do
	echo 1 > "$t/events/sched/$event/enable"
	echo 1 > "$t/instances/archpmu-hold/events/sched/$event/enable"
done
echo 0 > "$t/tracing_on"
echo 0 > "$t/instances/archpmu-hold/tracing_on"
exec "$@"
