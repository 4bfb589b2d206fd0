package view

import "github.com/perflab/perflab/internal/analysis"

// RunComparison is what `perflab compare` shows: B's runs against A's on
// the same workloads.
type RunComparison struct {
	A, B        []string // each side's run directories
	Forced      bool     // compared although the workloads differ
	Differences []string // how the workloads differ
	Notes       []string // what differs but does not stop a comparison, e.g. the targets' addresses
	OnlyA       []string // workloads only A ran
	OnlyB       []string
	Groups      []ComparisonGroup
	// NA and NB are how many runs each side's figures come from, every
	// repetition of a repeated run (perflab run --repeat) counted as a
	// run; 0 means len(A) and len(B).
	NA, NB int
}

// ComparisonGroup is the comparisons of one phase: the components that ran
// in it and its workloads.
type ComparisonGroup struct {
	Name        string // e.g. "Profile `low`": names in Markdown code marks
	Comparisons []analysis.Comparison
}

// SideBySide compares two systems that ran side by side in one cell: the
// components (or groups) A and B, or two workloads.
type SideBySide struct {
	A, B   string
	Notes  []string          // e.g. how the paired workloads' params differ
	Groups []ComparisonGroup // one per profile
	// Repetitions is, in a repeated run, how many repetitions each side's
	// figures come from (Fieller's interval across them); 0 or 1: one
	// run's per-interval samples (block bootstrap).
	Repetitions int
}
