#!/usr/bin/env python3
"""Samples the cumulative CPU seconds of the control plane's processes every 2 s, for
hack/bench-e2e-cpu.py (docs/benchmarks.md, "The headless Services' endpoints").
Usage: cpu-sampler.py OUT SECONDS   (stops itself after SECONDS)
OUT gets lines "unix_time comm cumulative_cpu_s", summed over the processes of one name (the
kernel's 15-character comm) by per-pid deltas, so a restarted process does not reset it."""
import os, sys, time
NAMES = {"kube-apiserver", "etcd", "kwok", "kube-scheduler", "kube-controller", "phalanx-operato",
         "phalanx-schedul"}
out, limit = sys.argv[1], float(sys.argv[2])
tick = os.sysconf("SC_CLK_TCK")
last = {}   # pid -> (comm, ticks)
total = {n: 0.0 for n in NAMES}
end = time.time() + limit
with open(out, "w") as f:
    while time.time() < end:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as s:
                    data = s.read()
            except OSError:
                continue
            comm = data[data.index("(") + 1:data.rindex(")")]
            if comm not in NAMES:
                continue
            fields = data[data.rindex(")") + 2:].split()
            ticks = int(fields[11]) + int(fields[12])
            prev = last.get(pid, (comm, 0))[1]
            total[comm] += (ticks - prev) / tick
            last[pid] = (comm, ticks)
        now = time.time()
        for n in sorted(NAMES):
            f.write("%.2f %s %.2f\n" % (now, n, total[n]))
        f.flush()
        time.sleep(2)
