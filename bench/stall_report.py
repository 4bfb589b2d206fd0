#!/usr/bin/env python3
"""One run of bench/stall.sh: its drops and lag, and for each interval that
dropped arrivals, the machine's samples in it.

    bench/stall_report.py RUN summary.json results.db machine.tsv
"""
import json
import sqlite3
import sys


def main():
    run, summary, db, machine = sys.argv[1:5]
    w = json.load(open(summary))["workloads"][0]
    lag = w["scheduler_lag_ms"]
    print(f"run {run}: dropped {w['dropped_total']}, max VUs {w['max_vus_used']}, "
          f"lag p99 {lag['p99']:.3f} ms, p99.9 {lag['p99_9']:.3f} ms, max {lag['max']:.3f} ms")
    rows = [line.rstrip("\n").split("\t") for line in open(machine)][1:]
    samples = [[float(x) for x in r] for r in rows if len(r) == 7]
    con = sqlite3.connect(db)
    for idx, start, end, dropped, vus in con.execute(
            "SELECT idx, start_ns, end_ns, dropped, vus FROM intervals WHERE dropped > 0 ORDER BY idx"):
        lo, hi = start / 1e9, end / 1e9
        inside = [s for s in samples if lo <= s[0] <= hi + 0.1]
        if not inside:
            print(f"  interval {idx}: {dropped} dropped, {vus} VUs; no machine sample")
            continue
        worst = max(inside, key=lambda s: s[3])
        print(f"  interval {idx}: {dropped} dropped, {vus} VUs; core busy max {max(s[1] for s in inside):.2f}, "
              f"steal max {worst[3]:.2f} (machine {max(s[4] for s in inside):.2f}), "
              f"iowait max {max(s[2] for s in inside):.2f}, runnable max {max(int(s[5]) for s in inside)}, "
              f"perflab CPU min {min(s[6] for s in inside):.2f} max {max(s[6] for s in inside):.2f}")


if __name__ == "__main__":
    main()
