// Package readback reads a run back from its store into what reports
// show (view.Run): every workload's summary over its steady-state
// window, the cells with their phases, components and resource figures,
// sizes and scaling fits, side-by-side comparisons, the SLO gates judged
// again, the gateway overheads and a capacity search's outcome. It also
// compares runs (perflab compare) and writes a run's report files.
//
//	results.Run ─► Load ─► view.Run ─► WriteReports (report.md, report.html, summary.json, charts/, sizes/)
//	     runs A, B ─► ForCompare ─► Compare ─► view.RunComparison
//
// It reads finished runs, runs killed mid-way and runs still going, and
// never writes to the store.
package readback
