package report

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileIsAtomic (issue 16, item 14): a report file whose writing
// fails (a full disk) leaves no empty or partial file, and an earlier
// file of that name as it was; one written whole replaces it.
func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.md")
	full := errors.New("no space left on device")
	err := writeFile(path, func(f *os.File) error {
		f.WriteString("# half a rep")
		return full
	})
	if !errors.Is(err, full) {
		t.Errorf("err = %v, want the render's", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed write left %v", entries)
	}
	if err := writeFile(path, func(f *os.File) error { _, err := f.WriteString("# old"); return err }); err != nil {
		t.Fatal(err)
	}
	_ = writeFile(path, func(f *os.File) error { f.WriteString("# new, cut"); return full })
	if b, err := os.ReadFile(path); err != nil || string(b) != "# old" {
		t.Errorf("after a failed rewrite: %q, %v; want the earlier file whole", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
}
