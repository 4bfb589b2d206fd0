package cli

import (
	"flag"

	"github.com/perflab/perflab/internal/fleet"
	"github.com/perflab/perflab/internal/shard"
)

// maxWorkers bounds --workers.
const maxWorkers = 1024

// localDist is the distributed run --workers and --store ask for: nil
// without --workers.
func (e *env) localDist(fs *flag.FlagSet, workers int, storeURL, runID, profiles string) (*fleet.Options, error) {
	if !set(fs, "workers") {
		if storeURL != "" || runID != "" {
			return nil, usageErrorf("--store and --run-id are of the workers of --workers N: give --workers too")
		}
		return nil, nil
	}
	if workers < 1 || workers > maxWorkers {
		return nil, usageErrorf("--workers %d: want 1 to %d", workers, maxWorkers)
	}
	if storeURL != "" {
		if _, err := shard.Open(storeURL); err != nil {
			return nil, usageErrorf("--Store: %v", err)
		}
	}
	if runID != "" {
		if storeURL == "" {
			return nil, usageErrorf("--run-id %s: the workers started elsewhere need the --store they share", runID)
		}
		return &fleet.Options{Workers: workers, Store: storeURL, RunID: runID, Profiles: profiles, Launch: fleet.External{},
			HelloIn: fleet.ExternalHelloIn}, nil
	}
	exe, err := e.perflabExe()
	if err != nil {
		return nil, err
	}
	return &fleet.Options{Workers: workers, Store: storeURL, Profiles: profiles, Launch: &fleet.Local{Exe: exe},
		HelloIn: fleet.LocalHelloIn}, nil
}
