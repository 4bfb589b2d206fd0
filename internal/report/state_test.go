package report

import "testing"

// TestStateTexts checks how a run, a cell and a phase say their state.
func TestStateTexts(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{stateText(&Run{State: "running"}), "incomplete (the run was killed; figures cover what was recorded)"},
		{stateText(&Run{State: "failed", Message: "boom"}), "failed: boom"},
		{stateText(&Run{State: "completed"}), "completed"},
		{cellStateText(&Cell{State: "running", Message: "ignored"}), "incomplete (the run was killed during this cell)"},
		{cellStateText(&Cell{State: "failed", Message: "boom"}), "failed: boom"},
		{phaseStateText(&Phase{State: "running"}), "incomplete (the run was killed during this phase)"},
		{phaseStateText(&Phase{State: "interrupted"}), "interrupted"},
		// still going: its perflab runs
		{stateText(&Run{State: "running", InProgress: true}), "running: in progress; figures cover what was recorded so far"},
		{cellStateText(&Cell{State: "running", InProgress: true}), "running: in progress; figures cover what was recorded so far"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
