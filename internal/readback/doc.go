// Package readback reads a run back from its store into its read model
// (view.Run): every workload's summary over its steady-state window, the
// cells with their phases, components and resource figures, sizes and
// scaling fits, side-by-side comparisons, what the drivers told, the SLO
// gates judged again and the gateway overheads. It also compares runs
// (perflab compare).
//
//	results.Run ─► Load ─► view.Run ─► run judges it, report renders it
//	     runs A, B ─► ForCompare ─► Compare ─► view.RunComparison
//
// It reads finished runs, runs killed mid-way and runs still going, from
// what each run recorded (no driver of this perflab is asked: a run made
// by another version reads the same), and never writes to the store.
package readback
