//go:build race

package testutil

// raceEnabled: the race detector slows the code it watches several times.
const raceEnabled = true
