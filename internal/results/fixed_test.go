package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateAt: a fixed run directory is made with its parents, or taken
// when it is empty; one holding anything is refused and left as it was.
func TestCreateAt(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "a", "b")
	r, err := CreateScrubbedAt(fresh, Meta{Name: "x"}, nil)
	if err != nil || r.Dir() != fresh {
		t.Fatalf("a new directory: %v", err)
	}
	r.Close()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err = CreateScrubbedAt(empty, Meta{Name: "x"}, nil)
	if err != nil {
		t.Fatalf("an empty directory: %v", err)
	}
	r.Close()
	if _, err := CreateScrubbedAt(fresh, Meta{Name: "x"}, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a directory with a run in it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fresh, DBName)); err != nil {
		t.Errorf("the refused directory's run was touched: %v", err)
	}
}
