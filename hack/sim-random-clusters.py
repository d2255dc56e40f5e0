#!/usr/bin/env python3
"""Phalanx against the baselines on clusters nobody tuned it for (docs/simulator.md, "Clusters
nobody tuned for"): for each number N of a range, a cluster spec drawn from N alone — one or two
node groups (p5 / p6-b200 / GB200 presets, 4 to 120 nodes each, random fanouts), one to four
queues with random nominal quotas, cohorts, preemption and queueing settings, sometimes node
failures — and `phalanx simulate --json --allow-unplaceable` on it with a generated trace
(seed N). The same N gives the same cluster and figures on every machine.

  hack/sim-random-clusters.py [--phalanx build/cli/phalanx] [--clusters 0-159] [--jobs 500]
                              [--keep DIR] [--show N] [--backfill-quota]

Prints Markdown: per axis, Phalanx's figure against the best of kueue-tas, volcano-hypernode and
kai-topology on each cluster (utilization in points, p99 wait as a ratio, locality in points),
summed up as mean, median and how often Phalanx is at least as good, and against each peer
alone; then the clusters where it
is furthest behind on each axis, to look into with `--keep DIR` (the cluster files are written
there as rN.yaml). Rules broken by any policy but first-fit (which may not place TP groups) and
failed runs are listed and make the exit code 1. `--backfill-quota` gives every queue without a
cohort `backfillQuota: HoldForHead` (docs/admission.md, "Backfill for quota"); the clusters are
otherwise the same.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

PRESETS = {"eks": ("p5.48xlarge", 3, 8), "eks-4layer": ("p6-b200.48xlarge", 4, 8),
           "gb200": ("p6e-gb200.36xlarge", 4, 4)}
PEERS = ["kueue-tas", "volcano-hypernode", "kai-topology"]
VIOLATIONS = ["partial_gang_events", "overcommit_events", "group_violation_events",
              "required_level_violation_events", "invalid_actions"]


def cluster_yaml(n, backfill_quota=False):
    """The cluster spec of number n: YAML text and extra simulate flags."""
    r = random.Random(n)
    first = r.choice(sorted(PRESETS))
    if r.random() < 0.6:
        presets = [first]
    elif first == "eks":  # eks mixes with either 4-layer preset; those two do not mix
        presets = ["eks", r.choice(["eks-4layer", "gb200"])]
    else:
        presets = [first, "eks"]
    groups = []
    for i, preset in enumerate(presets):
        instance, depth, gpus = PRESETS[preset]
        fanout = [r.randint(1, 3) for _ in range(depth - 1)] + [r.choice([4, 8, 16, 18])]
        groups.append(("g%d" % i, instance, r.randint(4, 120), preset, fanout, gpus))
    y = ["name: r%d" % n, "cycleSeconds: %d" % r.choice([5, 10, 30]), "nodeGroups:"]
    for name, instance, count, preset, fanout, _ in groups:
        y += ["- name: " + name, "  instanceType: " + instance, "  count: %d" % count,
              "  topology:", "    preset: " + preset, "    fanout: %s" % fanout]
    y.append("queues:")
    queues = r.randint(1, 4)
    for q in range(queues):
        y.append("- name: q%d" % q)
        if queues > 1 and r.random() < 0.8:
            y.append("  cohort: c")
        elif backfill_quota:  # draws nothing: cluster n is the same with or without it
            y.append("  backfillQuota: HoldForHead")
        y.append("  flavors:")
        for name, _, count, _, _, gpus in groups:
            quota = max(8, int(count * gpus * r.uniform(0.1, 1.0) / queues) // 8 * 8)
            y += ["  - name: " + name, "    nominalQuota: {nvidia.com/gpu: %d}" % quota]
        if r.random() < 0.6:
            y += ["  preemption:",
                  "    withinClusterQueue: " + r.choice(
                      ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
                  "    reclaimWithinCohort: " + r.choice(["Never", "Any", "LowerPriority"])]
        if r.random() < 0.3:
            y.append("  queueingStrategy: " + r.choice(["StrictFIFO", "BestEffortFIFO"]))
    if r.random() < 0.3:
        y += ["failures:", "  nodeMtbfHours: %d" % r.choice([500, 2000]), "  repairHours: 4"]
    flags = ["--fair-sharing", "on"] if r.random() < 0.3 else []
    return "\n".join(y) + "\n", flags


def parse_range(text):
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phalanx", default="build/cli/phalanx")
    ap.add_argument("--clusters", default="0-159", help="cluster numbers, e.g. 0-159")
    ap.add_argument("--jobs", type=int, default=500)
    ap.add_argument("--keep", help="write the cluster specs here (rN.yaml)")
    ap.add_argument("--show", type=int, default=5, help="clusters listed per axis")
    ap.add_argument("--backfill-quota", action="store_true",
                    help="backfillQuota: HoldForHead on every queue without a cohort")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="phalanx-random-clusters-")
    os.makedirs(folder, exist_ok=True)
    rows, problems = [], []
    for n in parse_range(args.clusters):
        text, flags = cluster_yaml(n, args.backfill_quota)
        path = os.path.join(folder, "r%d.yaml" % n)
        with open(path, "w") as f:
            f.write(text)
        cmd = [args.phalanx, "simulate", "--json", "--allow-unplaceable", "--cluster", path,
               "--jobs", str(args.jobs), "--seed", str(n)] + flags
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            problems.append("cluster %d: exit %d: %s" % (n, run.returncode, run.stderr.strip()[:300]))
            continue
        policies = {p["policy"]: p for p in json.loads(run.stdout)["policies"]}
        for name, p in policies.items():
            broken = {k: p[k] for k in VIOLATIONS if p[k]}
            if broken and name != "first-fit":
                problems.append("cluster %d: %s broke rules: %s" % (n, name, broken))
        ph = policies["phalanx"]
        peers = [policies[name] for name in PEERS]
        rows.append({
            "n": n, "fair": bool(flags),
            "each": {p["policy"]: (100 * (ph["gpu_utilization"] - p["gpu_utilization"]),
                                   ph["wait_p99_s"] / max(1.0, p["wait_p99_s"]),
                                   100 * (ph["locality_lowest_level"] -
                                          p["locality_lowest_level"])) for p in peers},
            "util": 100 * (ph["gpu_utilization"] - max(p["gpu_utilization"] for p in peers)),
            "p99": ph["wait_p99_s"] / max(1.0, min(p["wait_p99_s"] for p in peers)),
            "loc": 100 * (ph["locality_lowest_level"] -
                          max(p["locality_lowest_level"] for p in peers)),
            "best": {
                "util": max(peers, key=lambda p: p["gpu_utilization"])["policy"],
                "p99": min(peers, key=lambda p: p["wait_p99_s"])["policy"],
                "loc": max(peers, key=lambda p: p["locality_lowest_level"])["policy"]},
        })
    if not rows:
        print("no run succeeded", file=sys.stderr)
        return 1
    print("%d clusters (%s), %d jobs each; Phalanx against the best of %s per cluster and axis"
          % (len(rows), args.clusters, args.jobs, ", ".join(PEERS)))
    print()
    print("| axis | mean | median | Phalanx at least as good | worst |")
    print("|---|---|---|---|---|")
    axes = [("utilization (points)", "util", True, "%+.2f"),
            ("p99 wait (ratio)", "p99", False, "%.2f"),
            ("locality (points)", "loc", True, "%+.1f")]
    for title, key, higher, fmt in axes:
        values = [r[key] for r in rows]
        good = sum(1 for v in values if (v >= -1e-9 if higher else v <= 1 + 1e-9))
        worst = min(values) if higher else max(values)
        print("| %s | %s | %s | %d of %d | %s |" % (
            title, fmt % statistics.mean(values), fmt % statistics.median(values), good,
            len(values), fmt % worst))
    print()
    print("Against each peer (mean over the clusters; p99 wait: median ratio):")
    print()
    print("| peer | utilization (points) | p99 wait (ratio) | locality (points) |")
    print("|---|---|---|---|")
    for name in PEERS:
        util, p99, loc = zip(*(r["each"][name] for r in rows))
        print("| %s | %+.2f | %.2f | %+.1f |" % (
            name, statistics.mean(util), statistics.median(p99), statistics.mean(loc)))
    for title, key, higher, fmt in axes:
        print()
        print("Furthest behind in %s:" % title)
        for r in sorted(rows, key=lambda r: r[key], reverse=not higher)[:args.show]:
            print("  cluster %d%s: %s (best peer %s)" % (
                r["n"], " (fair sharing)" if r["fair"] else "", fmt % r[key], r["best"][key]))
    if problems:
        print()
        print("Problems:")
        for p in problems:
            print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
