#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/sampling.py: sampling figures, printed as Markdown tables.

Run by scripts/bench-sample as root where archpmu.ko is loaded (in the VM on
the model, time-driven). Three measurements, each on one CPU (the last):

1. The PMI handler's cost: nanoseconds per PMI it took as its own, from
   debugfs (pmi_handled, pmi_ns), over every run below.
2. The highest rate delivered with zero loss to a reading process: archpmu
   record -c PERIOD on cycles (the model counts 3,000 cycles per microsecond
   whatever runs), for 3 s, at increasing rates, beside perf record -e
   cpu-clock at the same rates; with each reader's own CPU time (pinned to
   another CPU) per 1,000 samples. ARCHPMU_BENCH_BASELINE=PATH adds the rows of
   another archpmu binary (an earlier build) to the same table.
3. The slowdown of a fixed workload (tests/workload/spin.c "work") under
   archpmu record at -F 1000, 10000 and the maximum, against perf record -e
   cpu-clock at the same rates (perf's sampling path on a software event, the
   closest peer that runs without a PMU), without call graphs, with -g and
   with --call-graph dwarf; samples, their size, and what was lost are read
   from each file.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(TOP, "build/user/userlib/archpmu")
SPIN = os.path.join(TOP, "build/user/tests/archpmu_spin")
DEBUGFS = "/sys/kernel/debug/archpmu/"
MODEL_CYCLES_PER_S = 3_000_000_000
WORK_MILLIONS = int(os.environ.get("ARCHPMU_BENCH_WORK", "150"))
SECONDS = 3  # each zero-loss run: the readers' start-up is a smaller part of their CPU


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


def run_timed(cmd, pin_cpu):
    """Exit status, output, and the CPU seconds (user + system) of cmd and what
    it waited for, run pinned to pin_cpu."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                             preexec_fn=lambda: os.sched_setaffinity(0, {pin_cpu}))
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return p.returncode, out.read().decode(errors="replace"), usage.ru_utime + usage.ru_stime


def work_ms(out):
    m = re.search(r"work_ms ([\d.]+)", out)
    return float(m.group(1)) if m else float("nan")


def file_figures(path):
    """Samples, their mean record size, samples lost and throttle records, read
    from a perf.data file's data section (the same for both tools' files)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 104 or blob[:8] != b"PERFILE2":
        return 0, 0, 0, 0
    off, size = struct.unpack_from("<QQ", blob, 40)
    pos, end = off, off + size
    samples = sample_bytes = lost = throttles = 0
    while pos + 8 <= end:
        rtype, _misc, rsize = struct.unpack_from("<IHH", blob, pos)
        if rsize < 8:
            break
        if rtype == 9:  # SAMPLE
            samples += 1
            sample_bytes += rsize
        elif rtype == 2:  # LOST: id, lost
            lost += struct.unpack_from("<Q", blob, pos + 16)[0]
        elif rtype == 13:  # LOST_SAMPLES: lost
            lost += struct.unpack_from("<Q", blob, pos + 8)[0]
        elif rtype == 5:  # THROTTLE
            throttles += 1
        pos += rsize
    return samples, (sample_bytes // samples if samples else 0), lost, throttles


class Spinner:
    """A busy loop on one CPU for the duration of a with block, so that a
    software clock (perf's cpu-clock) ticks there as the model's cycles do."""

    def __init__(self, cpu):
        self.cpu = cpu
        self.proc = None

    def __enter__(self):
        self.proc = subprocess.Popen(["sh", "-c", "while :; do :; done"],
                                     preexec_fn=lambda: os.sched_setaffinity(0, {self.cpu}))
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def set_param(name, value):
    path = "/sys/module/archpmu/parameters/" + name
    with open(path) as f:
        old = f.read().strip()
    with open(path, "w") as f:
        f.write(str(value))
    return old


def zero_loss_table(cpu, reader_cpu, data):
    """Rate asked against what each reader delivered, and its CPU."""
    readers = [("archpmu record", TOOL)]
    baseline = os.environ.get("ARCHPMU_BENCH_BASELINE")
    if baseline:
        readers.append(("archpmu record (baseline: %s)" % os.path.basename(baseline), baseline))
    print("### Zero-loss rate and the reader's CPU (CPU %d sampled for %d s with a busy loop on "
          "it, the reader pinned to CPU %d)" % (cpu, SECONDS, reader_cpu))
    print()
    print("| reader | rate asked | samples | lost | throttled | delivered / asked "
          "| reader CPU ms | its CPU ms per 1,000 samples beyond the 1,000/s row's |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")

    def archpmu_cmd(tool, rate):
        return [tool, "record", "-e", "cycles", "-c", str(MODEL_CYCLES_PER_S // rate), "-C",
                str(cpu), "--duration", str(SECONDS), "-o", data]

    def measure(label, cmd, rate, floor):
        with Spinner(cpu):
            rc, out, cpu_s = run_timed(cmd, reader_cpu)
        if rc != 0:
            print("| %s | %d/s | failed: %s | | | | | |" %
                  (label, rate, out.strip().splitlines()[-1] if out.strip() else rc))
            return None
        samples, _, lost, throttled = file_figures(data)
        marginal = "-"
        if floor and samples > floor[0]:
            marginal = "%.1f" % ((cpu_s - floor[1]) * 1e6 / (samples - floor[0]))
        print("| %s | %d/s | %d | %d | %d | %.2f | %.0f | %s |" %
              (label, rate, samples, lost, throttled, samples / (rate * SECONDS), cpu_s * 1000,
               marginal))
        return samples, cpu_s, lost == 0 and throttled == 0

    best = {}
    floors = {}
    labels = []
    for rate in (1000, 10000, 50000, 100000):
        rows = [("%s -e cycles" % label, archpmu_cmd(tool, rate)) for label, tool in readers]
        rows.append(("perf record -e cpu-clock",
                     ["perf", "record", "-e", "cpu-clock", "-c", str(10**9 // rate), "-C",
                      str(cpu), "-o", data, "--", "sleep", str(SECONDS)]))
        labels = [label for label, _ in rows]
        for label, cmd in rows:
            got = measure(label, cmd, rate, floors.get(label))
            if not got:
                continue
            if rate == 1000:
                floors[label] = got[:2]
            if got[2]:
                best[label] = max(best.get(label, 0), got[0] // SECONDS)
    # -g at the default limits, then the reader alone: without the handler's CPU
    # budget (sample_cpu_percent), which the model's emulated PMU access nears under
    # TCG at 100,000 PMIs a second.
    label = "archpmu record -e cycles -g"
    got = measure(label, archpmu_cmd(TOOL, 100000) + ["-g"], 100000, floors.get(labels[0]))
    labels.append(label)
    if got and got[2]:
        best[label] = got[0] // SECONDS
    old = set_param("sample_cpu_percent", 100)
    try:
        for graph in ([], ["-g"]):
            label = "archpmu record -e cycles%s, sample_cpu_percent=100" % (
                " -g" if graph else "")
            got = measure(label, archpmu_cmd(TOOL, 100000) + graph, 100000,
                          floors.get(labels[0]))
            labels.append(label)
            if got and got[2]:
                best[label] = got[0] // SECONDS
    finally:
        set_param("sample_cpu_percent", old)
    print()
    for label in labels:
        print("highest rate delivered with zero loss and no throttling, %s: %d samples/s" %
              (label, best.get(label, 0)))
    print()


def slowdown_table(cpu, data):
    print("### A fixed workload under sampling (%d M iterations on CPU %d)" %
          (WORK_MILLIONS, cpu))
    print()
    print("| sampler | call graph | rate | workload ms | slowdown | samples | bytes per sample "
          "| lost | throttled |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    work = [SPIN, "work", str(WORK_MILLIONS), str(cpu)]
    run(work)  # QEMU translates the workload's code once
    base = sorted(work_ms(run(work)[1]) for _ in range(3))[1]
    print("| none (median of 3) | - | - | %.0f | - | - | - | - | - |" % base)
    graphs = (("none", []), ("-g (fp)", ["-g"]), ("dwarf", ["--call-graph", "dwarf"]))
    for graph, graph_args in graphs:
        for label, freq in (("-F 1000", "1000"), ("-F 10000", "10000"), ("max", None)):
            if freq is None and graph == "dwarf":
                continue  # 8 KiB a sample at 100,000/s: gigabytes into the guest's memory
            runs = (
                ("archpmu record -e cycles",
                 label if freq else "-F 100000 (sample_max_rate)",
                 [TOOL, "record", "-e", "cycles", "-F", freq or "100000"]),
                ("perf record -e cpu-clock", label if freq else "-F max",
                 ["perf", "record", "-e", "cpu-clock", "-F", freq or "max"]),
            )
            for sampler, rate, cmd in runs:
                rc, out = run(cmd + graph_args + ["-C", str(cpu), "-o", data, "--"] + work)
                if rc != 0:
                    print("| %s | %s | %s | failed: %s | | | | | |" %
                          (sampler, graph, rate,
                           out.strip().splitlines()[-1] if out.strip() else rc))
                    continue
                samples, size, lost, throttled = file_figures(data)
                ms = work_ms(out)
                print("| %s | %s | %s | %.0f | %+.1f%% | %d | %d | %d | %d |" %
                      (sampler, graph, rate, ms, (ms / base - 1) * 100, samples, size, lost,
                       throttled))
    print()


def main():
    cpus = online_cpus()
    cpu = cpus[-1]
    data = "/tmp/archpmu-bench.data"
    pmi0, ns0 = debugfs("pmi_handled"), debugfs("pmi_ns")
    zero_loss_table(cpu, cpus[0], data)
    slowdown_table(cpu, data)
    pmis, ns = debugfs("pmi_handled") - pmi0, debugfs("pmi_ns") - ns0
    print("PMI handler: %d PMIs, %.0f ns each on average (model backend under QEMU/TCG: "
          "each PMU register access is emulated)" % (pmis, ns / pmis if pmis else 0))


if __name__ == "__main__":
    sys.exit(main())
