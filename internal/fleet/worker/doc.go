// Package worker is one worker of a distributed run (perflab worker): it
// registers in the shared store, runs its share of every phase the
// coordinator announces from the instant it names, on internal/run's phase
// code (run.Compile, run.BuildAll, run.RunEngines), writes its intervals
// and its end (shard.Detail), and ends when the coordinator says the run is
// done or aborted. It starts no component and observes nothing but
// itself.
package worker
