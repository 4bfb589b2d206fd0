// Package fleet makes a run's load with workers: perflab processes on this
// machine, started elsewhere, or the pods of a Kubernetes Indexed Job.
//
//	run.Run ─► Coordinator (a run.Load) ─► shared store (internal/shard) ◄─ workers (fleet/worker)
//	               │ announces each phase, follows the workers' parts,
//	               ▼ merges them interval by interval
//	           the run's store
//
// The Coordinator is what internal/run is given as the source of a
// distributed run's load; a Launcher starts its workers (Local, External,
// K8s). Merge rebuilds a run from the shared store alone (perflab merge).
// What a worker reports of its part of a phase besides its intervals is a
// shard.Detail (docs/format/shards.md).
package fleet
