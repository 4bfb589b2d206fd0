// Package capacity holds the run loop's strategies that look for a
// system's capacity rather than run a plan's profiles in order: the
// capacity search (from a start rate, multiplied after each step that met
// the gates, then bisected between the last pass and the first failure)
// and the sweep (a throughput step, then constant rates up to it). Each is
// a run.Strategy that runs its steps as phases of the plan's one cell, and
// a run.Finisher that fails a run in which no step met the gates.
package capacity
