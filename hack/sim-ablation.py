#!/usr/bin/env python3
"""The ablation tables of docs/simulator.md ("Issue 13's goal"), regenerated from `phalanx
simulate --json`: for each scenario and seed, the four baselines and Phalanx with backfill and
the locality wait switched on and off, all on the same trace and cluster.

  hack/sim-ablation.py [--phalanx build/cli/phalanx] [--scenario default] [--seeds 1-5]
                       [--variants all|default|fair|wait|preemption|limits] [--wins]
                       [--sim-args "FLAGS"]

Prints Markdown: a table of "utilization / p99 wait / locality" cells per seed with the mean,
then locality by gang size summed over the seeds (jobs placed inside one domain of the lowest
level that could hold them / jobs judged), then p99 wait against p99 queued time per seed.
`--variants fair` compares the default with `--fair-sharing on` (Kueue's fair sharing), which
switches it for every policy: the baselines appear twice, without and with it.
`--variants wait` runs the default with the locality wait at 240, 270, 330 and 360 s beside
300 s: how far the per-seed figures move for a change that should not matter.
`--variants preemption` runs kueue-tas, volcano-hypernode and kai-topology a second and third
time with each other's preemption rule (`--baseline-preemption`), placement and admission
their own: which part of a baseline's figures its preemption rule makes.
`--variants limits` runs the default with backfill planning on time limits 1.5, 2 and 4 times
the real run times (`--time-limit-factor`) beside exact ones, and without backfill: what
backfill's figures owe to exact estimates.

`--sim-args "FLAGS"` passes more `phalanx simulate` flags to every run, the baselines' too: the
eviction cost (`--restart-overhead`, `--checkpoint-interval`) is the engine's, not a policy's.

`--wins` prints, instead of the tables, how often each policy wins over the seeds: the seeds
where its p99 wait (and, separately, its p99 queued time) is at most that of every one of four
others — a Phalanx row against the four baselines, a baseline against the other three and
default Phalanx — and, for each Phalanx row, the seeds where each part of issue 13's goal holds
(the rule of tests/unit/sim/goal_test.cc) and where all of it does. Rows with fair sharing
are judged only against rows with it; a baseline with another's preemption rule against the
other three (their own rules) and default Phalanx, as the baseline itself is.
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
WAITS = [("phalanx: wait %d" % w, ["--locality-wait", str(w)]) for w in (240, 270, 330, 360)]
LIMITS = [("phalanx: time limits x%s" % f, ["--time-limit-factor", f]) for f in ("1.5", "2", "4")]
DEFAULT = VARIANTS[3][0]
FAIR = " + fair sharing"  # the suffix of every row run with --fair-sharing on
SWAPPED = " + %s's preemption"  # a baseline run with --baseline-preemption RULE
TOPOLOGY_AWARE = BASELINES[1:]  # the baselines --baseline-preemption applies to


EXTRA = []  # --sim-args: for every run, baselines included


def simulate(phalanx, scenario, seed, args):
    cmd = [phalanx, "simulate", "--json", "--scenario", scenario, "--seed", str(seed)] + EXTRA + args
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
    ap.add_argument("--variants", choices=["all", "default", "fair", "wait", "preemption", "limits"],
                    default="all")
    ap.add_argument("--wins", action="store_true")
    ap.add_argument("--sim-args", default="",
                    help="more `phalanx simulate` flags for every run, the baselines' too "
                         "(e.g. '--checkpoint-interval 1800')")
    a = ap.parse_args()
    EXTRA.extend(a.sim_args.split())
    seeds = seeds_of(a.seeds)
    variants = {"all": VARIANTS[:4], "default": [VARIANTS[1], VARIANTS[3]],
                "fair": [VARIANTS[3], VARIANTS[4]], "wait": [VARIANTS[3]] + WAITS,
                "preemption": [VARIANTS[3]],
                "limits": [VARIANTS[3]] + LIMITS + [VARIANTS[1]]}[a.variants]
    rows = {}  # name -> [summary per seed]
    for seed in seeds:
        base = simulate(a.phalanx, a.scenario, seed, ["--policy", ",".join(BASELINES)])
        for b in BASELINES:
            rows.setdefault(b, []).append(base[b])
        if a.variants == "fair":
            fair = simulate(a.phalanx, a.scenario, seed,
                            ["--policy", ",".join(BASELINES), "--fair-sharing", "on"])
            for b in BASELINES:
                rows.setdefault(b + FAIR, []).append(fair[b])
        if a.variants == "preemption":
            for rule in TOPOLOGY_AWARE:
                hosts = [b for b in TOPOLOGY_AWARE if b != rule]  # rule's own ran in `base`
                swapped = simulate(a.phalanx, a.scenario, seed,
                                   ["--policy", ",".join(hosts), "--baseline-preemption", rule])
                for b in hosts:
                    rows.setdefault(b + SWAPPED % rule, []).append(swapped[b])
        for name, args in variants:
            rows.setdefault(name, []).append(
                simulate(a.phalanx, a.scenario, seed, ["--policy", "phalanx"] + args)["phalanx"])

    if a.wins:
        return print_wins(rows, seeds)

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


def goal_misses(phalanx, baselines):
    """The axes of issue 13's goal that `phalanx` misses against `baselines` (goal_test.cc)."""
    misses = set()
    if phalanx["gpu_utilization"] < max(b["gpu_utilization"] for b in baselines) - 0.005:
        misses.add("utilization")
    if phalanx["wait_p99_s"] > min(b["wait_p99_s"] for b in baselines):
        misses.add("p99")
    for b in baselines:
        for mine, theirs in zip(phalanx["locality_by_size"], b["locality_by_size"]):
            if mine["jobs"] < 10 or theirs["jobs"] < 10:
                continue
            if mine["local"] * theirs["jobs"] < theirs["local"] * mine["jobs"]:
                misses.add("locality")
    return misses


def print_wins(rows, seeds):
    n = len(seeds)
    # Like against like: rows with fair sharing against the baselines with it, the others
    # against the baselines without it.
    def baselines_for(name):
        suffix = FAIR if name.endswith(FAIR) else ""
        return [b + suffix for b in BASELINES if b + suffix in rows]
    base_of = lambda name: name.split(" + ")[0]  # "kueue-tas + fair sharing" -> "kueue-tas"
    is_baseline = lambda name: base_of(name) in BASELINES
    def others(name):
        field = baselines_for(name)
        if not is_baseline(name):
            return field
        phalanx = VARIANTS[4][0] if name.endswith(FAIR) else DEFAULT
        return [b for b in field if base_of(b) != base_of(name)] + [phalanx]
    print("%d seed%s. A row wins a seed when its figure is at most each of four others' (a "
          "Phalanx row: the four baselines; a baseline: the other three and default Phalanx; "
          "with fair sharing, all of them with it)." % (n, "" if n == 1 else "s"))
    print()
    print("| policy | p99 wait: seeds won | p99 queued: seeds won | mean p99 wait | "
          "mean p99 queued |")
    print("|---|---|---|---|---|")
    for name, per_seed in rows.items():
        field = others(name)
        won = {k: sum(per_seed[i][k] <= min(rows[o][i][k] for o in field) for i in range(n))
               for k in ("wait_p99_s", "queued_p99_s")}
        print("| %s | %d of %d | %d of %d | %.1f h | %.1f h |" % (
            name, won["wait_p99_s"], n, won["queued_p99_s"], n,
            sum(s["wait_p99_s"] for s in per_seed) / n / 3600,
            sum(s["queued_p99_s"] for s in per_seed) / n / 3600))
    print()
    print("| Phalanx row | goal met: utilization | p99 wait | locality | all of it | "
          "mean utilization |")
    print("|---|---|---|---|---|---|")
    for name, per_seed in rows.items():
        if is_baseline(name):
            continue
        misses = [goal_misses(per_seed[i], [rows[b][i] for b in baselines_for(name)])
                  for i in range(n)]
        met = lambda axis: sum(axis not in m for m in misses)
        print("| %s | %d of %d | %d of %d | %d of %d | %d of %d | %.2f %% |" % (
            name, met("utilization"), n, met("p99"), n, met("locality"), n,
            sum(not m for m in misses), n,
            100 * sum(s["gpu_utilization"] for s in per_seed) / n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
