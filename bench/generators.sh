#!/usr/bin/env bash
# Generator efficiency of the remote-write and OTLP drivers: samples/s and
# spans/s that perflab generates, encodes and sends per core of its own CPU,
# against a sink that discards (bench/generators.yaml: the built-in target
# on core 1, answering 200 with an empty body). perflab runs on core 0 and
# measures its own CPU (the "perflab" generator component), so the figure is
# the workload's rate in its window divided by perflab's mean CPU there.
#
#   bench/generators.sh            # REPS=3, medians
set -euo pipefail
REPS=${REPS:-3}
cd "$(dirname "$0")/.."
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
go build -o "$work/perflab" ./cmd/perflab
for i in $(seq "$REPS"); do
  taskset -c 0 "$work/perflab" run bench/generators.yaml --out "$work/runs" --json > "$work/run$i.json" 2>"$work/err$i" ||
    { cat "$work/err$i" >&2; exit 1; }
done
python3 - "$work" "$REPS" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
rows = {}
for i in range(1, reps + 1):
    s = json.load(open(f"{work}/run{i}.json"))
    phases = {p["profile"]: p for p in s["cells"][0]["phases"]}
    for w in s["workloads"]:
        facts = {f["name"]: f["value"] for f in w.get("facts", [])}
        profile = w["name"].split("/")[0]
        comps = {c["name"]: c for c in phases[profile]["resources"]["components"]}
        cpu = comps["perflab"]["cpu_cores"]["avg"]
        if "samples per request" in facts:
            unit, per_op = "samples", float(facts["samples per request"])
        else:
            unit, per_op = "spans", float(facts["traces per request"]) * float(facts["mean spans per trace"])
        rate = w["rate"] * per_op
        rows.setdefault((profile, unit), []).append((rate, cpu, rate / cpu))
print(f"medians of {reps} runs; perflab on core 0, the sink on core 1\n")
print("| workload | unit | generated /s | perflab CPU (cores) | per core /s |")
print("|---|---|---:|---:|---:|")
for (profile, unit), v in rows.items():
    med = lambda k: statistics.median(x[k] for x in v)
    print(f"| {profile} | {unit} | {med(0):,.0f} | {med(1):.2f} | {med(2):,.0f} |")
PY
