// Package view is the read model of a run: what readback builds from a
// run's store, what run judges a run's end by, and what report renders.
// A run (Run) is its cells, each a configuration of the plan's matrix
// with its phases, components, resource figures and insights; its
// workloads' summaries; its SLO gates' verdicts; what its drivers told
// (driver.Fact, driver.Check); a capacity search's steps; the
// comparisons of perflab compare (RunComparison).
//
//	results.Run ─► readback ─► view.Run ─► run (judges) ─► report (renders)
//
// It holds data and the questions asked of it (which checks lost data,
// which cells the sizes come from); it writes nothing and formats no
// text for people.
package view
