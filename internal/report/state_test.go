package report

import (
	"testing"

	"github.com/perflab/perflab/internal/view"
)

// TestStateTexts checks how a run, a cell and a phase say their state.
func TestStateTexts(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{stateText(&view.Run{State: "running"}), "incomplete (the run was killed; figures cover what was recorded)"},
		{stateText(&view.Run{State: "failed", Message: "boom"}), "failed: boom"},
		{stateText(&view.Run{State: "completed"}), "completed"},
		{cellStateText(&view.Cell{State: "running", Message: "ignored"}), "incomplete (the run was killed during this cell)"},
		{cellStateText(&view.Cell{State: "failed", Message: "boom"}), "failed: boom"},
		{phaseStateText(&view.Phase{State: "running"}), "incomplete (the run was killed during this phase)"},
		{phaseStateText(&view.Phase{State: "interrupted"}), "interrupted"},
		// still going: its perflab runs
		{stateText(&view.Run{State: "running", InProgress: true}), "running: in progress; figures cover what was recorded so far"},
		{cellStateText(&view.Cell{State: "running", InProgress: true}), "running: in progress; figures cover what was recorded so far"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
