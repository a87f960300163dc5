#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A flame graph of archpmu record -g, as a user draws one: the recording made
# in the VM on the model (a program spinning in main -> archpmu_chain_a ->
# archpmu_chain_b -> archpmu_spin_user, built with frame pointers), drawn by
# scripts/flamegraph (perf's flame-graph report, d3-flame-graph's template)
# and opened in headless Chromium, whose DOM must hold each of those frames
# drawn 80% or more of the graph's width (the rest is the dynamic loader,
# slow under TCG), one above the other. Leaves OUT/flamegraph.png, the
# picture README shows. Usage: tests/flamegraph_test.sh [OUT [ARCHPMU SPIN]]
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/flamegraph}
tool=${2:-$top/build/user/userlib/archpmu}
spin=${3:-$top/build/user/tests/archpmu_spin}
rm -rf "$out" && mkdir -p "$out/vm"

for need in chromium perf python3; do
	command -v $need > /dev/null || { echo "FAIL: no $need (scripts/install-deps)"; exit 1; }
done
record=$(printf '%q ' "$tool" record -g -e instructions:u -o /tmp/vmout/chain.data -- "$spin" chain 3 1)
"$top/scripts/vm" --timeout 300 -o "$out/vm" -- sh -c \
	"insmod $(printf '%q' "$top/module/archpmu.ko") backend=model model_version=4 && $record" \
	> "$out/vm.log" 2>&1 || { cat "$out/vm.log"; echo "FAIL: the recording in the VM"; exit 1; }
"$top/scripts/flamegraph" "$out/vm/chain.data" "$out/flamegraph.html" "$out/flamegraph.png" \
	"$out/dom.html" || { echo "FAIL: scripts/flamegraph"; exit 1; }

python3 - "$out/dom.html" <<'PY'
import re
import sys

dom = open(sys.argv[1]).read()
svg = re.search(r'<svg width="([\d.]+)" class="partition d3-flame-graph"', dom)
if not svg:
    sys.exit("FAIL: no flame graph drawn in the page")
full = float(svg.group(1))
frames = {}
for m in re.finditer(r'<g transform="translate\([\d.]+,([\d.]+)\)" width="([\d.]+)" '
                     r'height="[\d.]+" name="([^"]+)" class="frame">', dom):
    y, width, name = float(m.group(1)), float(m.group(2)), m.group(3)
    if width > frames.get(name, (0, 0))[1]:
        frames[name] = (y, width)
fail = 0
chain = ["main", "archpmu_chain_a", "archpmu_chain_b", "archpmu_spin_user"]
for name in chain:
    y, width = frames.get(name, (0, 0))
    share = width / full * 100
    print("%-18s %5.1f%% of the width" % (name, share))
    if share < 80:
        print("FAIL: %s is drawn %.1f%% wide, not 80%% or more" % (name, share))
        fail = 1
ys = [frames.get(n, (0, 0))[0] for n in chain]
if ys != sorted(ys, reverse=True):  # d3-flame-graph draws callers below callees
    print("FAIL: the frames are not stacked caller below callee: %s" % ys)
    fail = 1
print("%d passed, %d failed" % (1 - fail, fail))
sys.exit(fail)
PY
