// Package run is perflab's one run loop. It checks and compiles a plan,
// then runs it: every cell (a configuration of the system under test) in
// turn, its components started or attached to and sampled, every phase
// (a profile of workloads) of the cell with its drivers built, prepared,
// loaded, read back and cleaned up, everything recorded in the run store
// as it happens; at the end the store is read back into the run's read
// model (internal/view), the run judged on it and its report files written
// by the writer the job gives (Job.Files): the package renders nothing.
//
//	Job ─► Run ─► cell ─► components (target) ─► sampling (observe) ─┐
//	                │                                                  │
//	                └► Strategy (in order, capacity search) ─► phase ─┤
//	                                   build · prepare · Load · read-back · cleanup
//	                                                                   ▼
//	               Record (results store) ─► readback ─► view.Run ─► judge ─► Job.Files ─► Result
//
// What varies is given to the loop, not branched on: a Strategy says which
// phases a cell runs (every one in order, or the steps of a capacity
// search); a Load makes a phase's load (this process's engines, or the
// workers of a distributed run: internal/fleet implements it, and this
// package never imports dist). perflab http runs an implicit plan of
// one workload, built from its flags; perflab worker runs phases announced
// by a coordinator through the same phase code (Phase, BuildAll,
// RunEngines).
//
// The package prints nothing: what a run does goes to its Events, which
// internal/cli renders, and a failed run returns a *Failure with its exit
// code and a hint.
package run
