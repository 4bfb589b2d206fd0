package results

import (
	"database/sql"
	"fmt"
)

// phaseWarningSchema is the table of warnings about a phase's resource
// figures that their source gave when it was read (a Prometheus query with
// no series, a stale series, a partial answer …). It is additive to format
// version 3: a store written before it reads as having none.
const phaseWarningSchema = `
CREATE TABLE phase_warnings (
	cell      INTEGER NOT NULL,
	profile   TEXT NOT NULL,
	component TEXT NOT NULL,
	message   TEXT NOT NULL
);
`

// PhaseWarning is one warning about the resource figures of a phase.
type PhaseWarning struct {
	Cell      int
	Profile   string
	Component string // the plan component whose source warned
	Message   string
}

// AddPhaseWarnings records warnings about phases' resource figures, in
// one transaction.
func (r *Run) AddPhaseWarnings(ws []PhaseWarning) error {
	what := fmt.Sprintf("add %d phase warnings", len(ws))
	if err := r.writable(what); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.inTx(func(tx *sql.Tx) error {
		for _, w := range ws {
			if _, err := tx.Exec(`INSERT INTO phase_warnings (cell, profile, component, message) VALUES (?, ?, ?, ?)`,
				w.Cell, w.Profile, w.Component, r.text(w.Message)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	return nil
}

// PhaseWarnings reads every phase warning in the order they were added.
func (r *Run) PhaseWarnings() ([]PhaseWarning, error) {
	var out []PhaseWarning
	err := r.readTable("phase_warnings", `SELECT cell, profile, component, message FROM phase_warnings ORDER BY rowid`,
		func(rows *sql.Rows) error {
			var w PhaseWarning
			if err := rows.Scan(&w.Cell, &w.Profile, &w.Component, &w.Message); err != nil {
				return err
			}
			out = append(out, w)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("cannot read phase warnings: %w", err)
	}
	return out, nil
}
