#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/sampling.py: sampling figures, printed as Markdown tables.

Run by scripts/bench-sample as root where archpmu.ko is loaded (in the VM on
the model, time-driven). Three measurements, each on one CPU (the last):

1. The PMI handler's cost: nanoseconds per PMI it took as its own, from
   debugfs (pmi_handled, pmi_ns), over every run below.
2. The highest rate delivered with zero loss to a reading process: archpmu
   record -c PERIOD on cycles (the model counts 3,000 cycles per microsecond
   whatever runs), for a second, at increasing rates.
3. The slowdown of a fixed workload (tests/workload/spin.c "work") under
   archpmu record at -F 1000, 10000 and the maximum, against perf record -e
   cpu-clock at the same rates (perf's sampling path on a software event, the
   closest peer that runs without a PMU), with samples delivered and lost.
"""
import os
import re
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(TOP, "build/user/userlib/archpmu")
SPIN = os.path.join(TOP, "build/user/tests/archpmu_spin")
DEBUGFS = "/sys/kernel/debug/archpmu/"
MODEL_CYCLES_PER_S = 3_000_000_000
WORK_MILLIONS = int(os.environ.get("ARCHPMU_BENCH_WORK", "150"))


def debugfs(name):
    with open(DEBUGFS + name) as f:
        return int(f.read())


def online_cpus():
    with open("/sys/devices/system/cpu/online") as f:
        text = f.read().strip()
    cpus = []
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def archpmu_counts(out, cpu):
    m = re.search(r"CPU%d: (\d+) samples, (\d+) lost, (\d+) throttled" % cpu, out)
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


def perf_counts(out):
    m = re.search(r"\((\d+) samples\)", out)
    samples = int(m.group(1)) if m else 0
    lost = sum(int(x) for x in re.findall(r"lost (\d+) chunks", out))
    return samples, lost


def work_ms(out):
    m = re.search(r"work_ms ([\d.]+)", out)
    return float(m.group(1)) if m else float("nan")


def main():
    cpu = online_cpus()[-1]
    data = "/tmp/archpmu-bench.data"
    pmi0, ns0 = debugfs("pmi_handled"), debugfs("pmi_ns")

    print("### Zero-loss rate (cycles, one CPU, archpmu record as the reader, 1 s each)")
    print()
    print("| rate asked | period | samples delivered | lost | throttled | delivered / asked |")
    print("|---:|---:|---:|---:|---:|---:|")
    best = best_unthrottled = 0
    for rate in (1000, 5000, 10000, 20000, 50000, 100000):
        period = MODEL_CYCLES_PER_S // rate
        rc, out = run([TOOL, "record", "-e", "cycles", "-c", str(period), "-C", str(cpu),
                       "--duration", "1", "-o", data])
        samples, lost, throttled = archpmu_counts(out, cpu) if rc == 0 else (0, 0, 0)
        if rc == 0 and lost == 0:
            best = max(best, samples)
            if throttled == 0:
                best_unthrottled = max(best_unthrottled, samples)
        print("| %d/s | %d | %d | %d | %d | %.2f |" % (rate, period, samples, lost, throttled,
                                                      samples / rate))
    print()
    print("highest rate delivered with zero loss: %d samples/s (%d without throttling)" %
          (best, best_unthrottled))
    print()

    print("### A fixed workload under sampling (%d M iterations on CPU %d)" %
          (WORK_MILLIONS, cpu))
    print()
    print("| sampler | rate | workload ms | slowdown | samples | lost |")
    print("|---|---|---:|---:|---:|---:|")
    work = [SPIN, "work", str(WORK_MILLIONS), str(cpu)]
    run(work)  # QEMU translates the workload's code once
    _, out = run(work)
    base = work_ms(out)
    print("| none | - | %.0f | - | - | - |" % base)
    for label, freq in (("-F 1000", "1000"), ("-F 10000", "10000"), ("max", None)):
        rc, out = run([TOOL, "record", "-e", "cycles", "-F", freq or "100000", "-C", str(cpu),
                       "-o", data, "--"] + work)
        samples, lost, _ = archpmu_counts(out, cpu)
        ms = work_ms(out)
        print("| archpmu record -e cycles | %s | %.0f | %+.1f%% | %d | %d |" %
              (label if freq else "-F 100000 (sample_max_rate)", ms, (ms / base - 1) * 100,
               samples, lost))
        rc, out = run(["perf", "record", "-e", "cpu-clock", "-F", freq or "max", "-C", str(cpu),
                       "-o", data, "--"] + work)
        if rc != 0:
            print("| perf record -e cpu-clock | %s | failed: %s | | | |" %
                  (label, out.strip().splitlines()[-1] if out.strip() else rc))
            continue
        samples, lost = perf_counts(out)
        ms = work_ms(out)
        print("| perf record -e cpu-clock | %s | %.0f | %+.1f%% | %d | %d |" %
              ("-F max" if freq is None else label, ms, (ms / base - 1) * 100, samples, lost))
    print()
    pmis, ns = debugfs("pmi_handled") - pmi0, debugfs("pmi_ns") - ns0
    print("PMI handler: %d PMIs, %.0f ns each on average (model backend under QEMU/TCG: "
          "each PMU register access is emulated)" % (pmis, ns / pmis if pmis else 0))


if __name__ == "__main__":
    sys.exit(main())
