#!/usr/bin/env python3
"""bench-e2e-cpu.py SAMPLES BENCHLOG JSON: cores per control-plane process in the middle 80 % of
each phase of one hack/bench-e2e.sh run, and CPU per pod.
  SAMPLES   hack/cpu-sampler.py output taken during the run
  BENCHLOG  the bench's stderr, each line prefixed with its unix time (date +%s.%N)
  JSON      the bench's stdout
"""
import json, re, sys
samples, benchlog, js = sys.argv[1:4]
series = {}
for line in open(samples):
    t, n, c = line.split()
    series.setdefault(n, []).append((float(t), float(c)))
data = json.load(open(js))
if "ladder" in data: data = data["ladder"][0]
marks = {}
for line in open(benchlog):
    m = re.match(r"(\d+\.\d+) \[bench-e2e\] (plain|gangs): ", line)
    if m: marks[m.group(2)] = float(m.group(1))
def at(n, t):
    pts = series[n]
    best = min(pts, key=lambda p: abs(p[0] - t))
    return best[1]
rows = []
for phase, key, mark in (("plain", "plain", "plain"), ("phalanx", "phalanx", "gangs")):
    d = data[key]
    t0 = marks[mark] - d["create_s"]
    t1 = t0 + d["all_bound_s"]
    a, b = t0 + 0.1 * (t1 - t0), t0 + 0.9 * (t1 - t0)
    cores = {n: (at(n, b) - at(n, a)) / (b - a) for n in series}
    s = sum(cores.values())
    pods_per_s = d["pods_per_s"]
    print("%-8s %s sum %.2f  cpu/pod %.1f ms  (%.0f pods/s, window %.0f s)" % (
        phase, " ".join("%s=%.2f" % (n, cores[n]) for n in sorted(cores)), s, 1000 * s / pods_per_s,
        pods_per_s, b - a))
print("ratio", data["ratio"], "burst", data.get("admitted_per_s"))
