#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/exporter.py: what `archpmu exporter` costs, beside a peer, as a Markdown table.

Run by scripts/bench-exporter as root where archpmu.ko is loaded (in the VM on the
model). Each exporter runs alone, on 5 events of every CPU, and is measured the same
way:

1. idle: its CPU time per second over IDLE_S seconds with no scraper;
2. scraped every second, as Prometheus would, over INTERVAL_S seconds;
3. per scrape: SCRAPES scrapes back to back, each on a new connection; its CPU time
   per scrape, the scrape's median and 99th percentile latency, and its size.

CPU time is the sum of the exporter's threads' run time (/proc/PID/task/*/schedstat,
in ns). The peer is node_exporter's perf collector (Debian's prometheus-node-exporter,
unpacked into build/node-exporter by scripts/install-deps): PCM's pcm-sensor-server
needs an Intel CPU with its MSRs, which the VM does not have. perf has no PMU in the VM
either, so the collector's hardware profilers fail there and it serves its 5 software
events per CPU; archpmu serves 5 architectural events per CPU on the model.
"""
import glob
import http.client
import os
import statistics
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(TOP, "build/user/userlib/archpmu")
NODE_EXPORTER = os.path.join(TOP, "build/node-exporter/usr/bin/prometheus-node-exporter")
IDLE_S = int(os.environ.get("ARCHPMU_BENCH_IDLE_S", "20"))
INTERVAL_S = int(os.environ.get("ARCHPMU_BENCH_INTERVAL_S", "20"))
SCRAPES = int(os.environ.get("ARCHPMU_BENCH_SCRAPES", "200"))

PEERS = [
    ("`archpmu exporter`, 5 events on the model", "127.0.0.1", 10738,
     [TOOL, "exporter", "--listen", "127.0.0.1:10738",
      "-e", "instructions,cycles,branches,branch-misses,ref-cycles"]),
    ("node_exporter 1.5 perf collector, its 5 software events", "127.0.0.1", 9100,
     [NODE_EXPORTER, "--collector.disable-defaults", "--collector.perf",
      "--web.listen-address=127.0.0.1:9100"]),
]


def cpu_ns(pid):
    """The run time of every live thread of pid, in ns."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def scrape(host, port):
    """One scrape on a new connection: its latency in s, and its body's size."""
    t0 = time.monotonic()
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/metrics")
    body = conn.getresponse().read()
    conn.close()
    return time.monotonic() - t0, body


def wait_serving(host, port):
    for _ in range(300):
        try:
            _, body = scrape(host, port)
            if body:
                return body
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"nothing serves on {host}:{port}")


def measure(name, host, port, cmd):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        body = wait_serving(host, port)
        series = sum(1 for line in body.decode().splitlines() if line and line[0] != "#")
        time.sleep(2)  # past its start-up

        c0 = cpu_ns(proc.pid)
        time.sleep(IDLE_S)
        idle = (cpu_ns(proc.pid) - c0) / IDLE_S / 1e6

        c0, t0 = cpu_ns(proc.pid), time.monotonic()
        for i in range(INTERVAL_S):
            scrape(host, port)
            time.sleep(max(0.0, t0 + i + 1 - time.monotonic()))
        interval = (cpu_ns(proc.pid) - c0) / (time.monotonic() - t0) / 1e6

        latencies, size = [], 0
        c0 = cpu_ns(proc.pid)
        for _ in range(SCRAPES):
            took, body = scrape(host, port)
            latencies.append(took)
            size = len(body)
        per_scrape = (cpu_ns(proc.pid) - c0) / SCRAPES / 1e3
        latencies.sort()
        p50 = statistics.median(latencies) * 1e3
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3
        return [name, f"{idle:.2f}", f"{interval:.2f}", f"{per_scrape:.0f}", f"{p50:.1f}",
                f"{p99:.1f}", str(size), str(series), str(rss_kb(proc.pid))]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main():
    cpus = os.sysconf("SC_NPROCESSORS_ONLN")
    print(f"### The exporter beside node_exporter's perf collector ({cpus} vCPUs, QEMU/TCG; "
          f"idle {IDLE_S} s, scraped every second {INTERVAL_S} s, {SCRAPES} scrapes back to back)")
    print()
    print("| exporter | idle: CPU ms/s | scraped every 1 s: CPU ms/s | CPU µs per scrape "
          "| scrape p50 ms | scrape p99 ms | bytes | samples | RSS kB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, host, port, cmd in PEERS:
        if not os.access(cmd[0], os.X_OK):
            print(f"| {name} | not there: {cmd[0]} (scripts/install-deps) |||||||| ")
            continue
        print("| " + " | ".join(measure(name, host, port, cmd)) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
