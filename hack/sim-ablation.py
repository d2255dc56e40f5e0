#!/usr/bin/env python3
"""The ablation tables of docs/simulator.md ("Issue 13's goal"), regenerated from `phalanx
simulate --json`: for each scenario and seed, the four baselines and Phalanx with backfill and
the locality wait switched on and off, all on the same trace and cluster.

  hack/sim-ablation.py [--phalanx build/cli/phalanx] [--scenario default] [--seeds 1-5]
                       [--variants all|default|fair]

Prints Markdown: a table of "utilization / p99 wait / locality" cells per seed with the mean,
then locality by gang size summed over the seeds (jobs placed inside one domain of the lowest
level that could hold them / jobs judged), then p99 wait against p99 queued time per seed.
`--variants fair` compares the default with `--fair-sharing on` (Kueue's fair sharing), which
switches it for every policy: the baselines appear twice, without and with it.
"""
import argparse
import json
import subprocess
import sys

BASELINES = ["first-fit", "kueue-tas", "volcano-hypernode", "kai-topology"]
VARIANTS = [
    ("phalanx: no backfill, no wait", ["--backfill", "off", "--locality-wait", "0"]),
    ("phalanx: no backfill, wait 300", ["--backfill", "off", "--locality-wait", "300"]),
    ("phalanx: backfill, no wait", ["--backfill", "on", "--locality-wait", "0"]),
    ("phalanx: backfill + wait 300 (default)", []),
    ("phalanx: default + fair sharing", ["--fair-sharing", "on"]),
]


def simulate(phalanx, scenario, seed, args):
    cmd = [phalanx, "simulate", "--json", "--scenario", scenario, "--seed", str(seed)] + args
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {p["policy"]: p for p in json.loads(out)["policies"]}


def seeds_of(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phalanx", default="build/cli/phalanx")
    ap.add_argument("--scenario", default="default")
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--variants", choices=["all", "default", "fair"], default="all")
    a = ap.parse_args()
    seeds = seeds_of(a.seeds)
    variants = {"all": VARIANTS[:4], "default": [VARIANTS[1], VARIANTS[3]],
                "fair": [VARIANTS[3], VARIANTS[4]]}[a.variants]
    rows = {}  # name -> [summary per seed]
    for seed in seeds:
        base = simulate(a.phalanx, a.scenario, seed, ["--policy", ",".join(BASELINES)])
        for b in BASELINES:
            rows.setdefault(b, []).append(base[b])
        if a.variants == "fair":
            fair = simulate(a.phalanx, a.scenario, seed,
                            ["--policy", ",".join(BASELINES), "--fair-sharing", "on"])
            for b in BASELINES:
                rows.setdefault(b + " + fair sharing", []).append(fair[b])
        for name, args in variants:
            rows.setdefault(name, []).append(
                simulate(a.phalanx, a.scenario, seed, ["--policy", "phalanx"] + args)["phalanx"])

    def cell(s):
        return "%.2f %% / %.1f h / %.1f %%" % (100 * s["gpu_utilization"], s["wait_p99_s"] / 3600,
                                               100 * s["locality_lowest_level"])

    print("| policy | " + " | ".join("seed %d" % s for s in seeds) + " | mean |")
    print("|---" * (len(seeds) + 2) + "|")
    for name, per_seed in rows.items():
        n = len(per_seed)
        mean = {k: sum(s[k] for s in per_seed) / n
                for k in ("gpu_utilization", "wait_p99_s", "locality_lowest_level")}
        print("| %s | %s | %s |" % (name, " | ".join(cell(s) for s in per_seed), cell(mean)))
    print()
    buckets = rows[BASELINES[0]][0]["locality_by_size"]
    labels = [("%d" % b["min_nodes"]) if b["min_nodes"] == b["max_nodes"] else
              ("%d+" % b["min_nodes"]) if b["max_nodes"] is None else
              "%d-%d" % (b["min_nodes"], b["max_nodes"]) for b in buckets]
    print("| policy | " + " | ".join(labels) + " |")
    print("|---" * (len(labels) + 1) + "|")
    for name, per_seed in rows.items():
        cells = []
        for i in range(len(buckets)):
            jobs = sum(s["locality_by_size"][i]["jobs"] for s in per_seed)
            local = sum(s["locality_by_size"][i]["local"] for s in per_seed)
            cells.append("%d/%d (%d %%)" % (local, jobs, round(100 * local / jobs)) if jobs else "-")
        print("| %s | %s |" % (name, " | ".join(cells)))
    print()
    # Wait stops at the first start; queued time adds the waits after preemptions and failures.
    print("| policy (p99 wait / p99 queued) | " + " | ".join("seed %d" % s for s in seeds) +
          " | mean |")
    print("|---" * (len(seeds) + 2) + "|")
    for name, per_seed in rows.items():
        n = len(per_seed)
        pair = lambda w, q: "%.1f h / %.1f h" % (w / 3600, q / 3600)
        print("| %s | %s | %s |" % (
            name, " | ".join(pair(s["wait_p99_s"], s["queued_p99_s"]) for s in per_seed),
            pair(sum(s["wait_p99_s"] for s in per_seed) / n,
                 sum(s["queued_p99_s"] for s in per_seed) / n)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
