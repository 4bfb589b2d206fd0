#!/usr/bin/env python3
"""Samples the machine every 100 ms while process PID lives: one line per
sample, tab-separated: unix time, the core CORE's busy, iowait and steal
shares since the last sample, the whole machine's steal share,
procs_running, and PID's CPU share (user + system) since the last sample.

    bench/machine.py PID CORE > machine.tsv
"""
import os
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def cpu_times():
    """Each cpu line of /proc/stat as a list of ints, by name."""
    out, running = {}, 0
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if parts[0].startswith("cpu"):
                out[parts[0]] = [int(x) for x in parts[1:]]
            elif parts[0] == "procs_running":
                running = int(parts[1])
    return out, running


def proc_cpu(pid):
    """PID's user + system ticks, or None when it has ended."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[11]) + int(rest[12])
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def shares(before, after):
    """busy, iowait and steal shares of one cpu line between two samples."""
    d = [a - b for a, b in zip(after, before)]
    total = sum(d[:8]) or 1  # user nice system idle iowait irq softirq steal
    idle = d[3] + d[4]
    return (total - idle) / total, d[4] / total, d[7] / total


def main():
    pid, core = int(sys.argv[1]), sys.argv[2]
    name = "cpu" + core
    prev, _ = cpu_times()
    prev_p, prev_t = proc_cpu(pid), time.time()
    print("time\tcore_busy\tcore_iowait\tcore_steal\tsteal\tprocs_running\tperflab_cpu")
    while True:
        time.sleep(0.1)
        now, running = cpu_times()
        p, t = proc_cpu(pid), time.time()
        if p is None:
            return
        busy, iowait, steal = shares(prev[name], now[name])
        _, _, all_steal = shares(prev["cpu"], now["cpu"])
        own = (p - prev_p) / HZ / (t - prev_t)
        print(f"{t:.3f}\t{busy:.3f}\t{iowait:.3f}\t{steal:.3f}\t{all_steal:.3f}\t{running}\t{own:.3f}", flush=True)
        prev, prev_p, prev_t = now, p, t


if __name__ == "__main__":
    main()
