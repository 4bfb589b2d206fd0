#!/usr/bin/env python3
"""peakmem.py LOG CMD...: runs CMD with its stdout in LOG and its stderr in
LOG.err (LOG - for neither) and
prints "exit seconds peak_rss_kib anon_kib file_kib": the process's own
peak RSS (VmHWM, read from /proc every 50 ms; processes it starts are not
counted), and the highest anonymous (heap, stacks, SQLite's page cache) and
file-backed (its binary's mapped code and data) parts seen."""
import subprocess
import sys
import time

t0 = time.time()
out = err = subprocess.DEVNULL
if sys.argv[1] != "-":
    out, err = open(sys.argv[1], "w"), open(sys.argv[1] + ".err", "w")
p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=err)
hwm = anon = filep = 0
while p.poll() is None:
    try:
        with open(f"/proc/{p.pid}/status") as f:
            st = dict(line.split(":", 1) for line in f)
        kib = lambda k: int(st[k].split()[0])
        hwm, anon, filep = max(hwm, kib("VmHWM")), max(anon, kib("RssAnon")), max(filep, kib("RssFile"))
    except (OSError, KeyError, ValueError):
        pass
    time.sleep(0.05)
print(p.returncode, round(time.time() - t0), hwm, anon, filep)
