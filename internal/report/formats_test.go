package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/perflab/perflab/internal/view"
)

// TestFormats: every format renders a run, has a name once and a file of
// its own; the names read as help and errors give them.
func TestFormats(t *testing.T) {
	var names, files []string
	for _, f := range Formats {
		if f.Run == nil || slices.Contains(names, f.Name) {
			t.Errorf("format %q: no run writer, or named twice", f.Name)
		}
		names = append(names, f.Name)
		for _, file := range []string{f.File, f.SearchFile} {
			if file != "" && slices.Contains(files, file) {
				t.Errorf("format %q: file %s is another's", f.Name, file)
			}
			files = append(files, file)
		}
		if (f.SearchFile != "") && f.Search == nil {
			t.Errorf("format %q: a search file and no search writer", f.Name)
		}
	}
	all := func(Format) bool { return true }
	if got := FormatNames(all, false); got != "terminal, md, html, json, csv or junit" {
		t.Errorf("names %q", got)
	}
	if got := FormatNames(func(f Format) bool { return f.Compare != nil }, true); got != "md or json" {
		t.Errorf("compare names %q", got)
	}
	if got := FormatNames(func(f Format) bool { return f.Name == "html" }, true); got != "html (self-contained, with charts)" {
		t.Errorf("html with help %q", got)
	}
	if _, ok := FormatNamed("yaml"); ok {
		t.Error("a format yaml")
	}
}

// TestWriteFilesAndReadSearch: a run's files are the formats' files, a
// search's its own; a run read back from the directory gets the search
// search.json holds, without gates' verdicts, and a run without one none.
func TestWriteFilesAndReadSearch(t *testing.T) {
	dir := t.TempDir()
	r := singleRun()
	r.Dir = dir
	written, err := WriteFiles(dir, r)
	if err != nil || !slices.Equal(written, []string{"report.md", "report.html", "summary.json"}) {
		t.Fatalf("WriteFiles: %v, %v", written, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "search.md")); err == nil {
		t.Error("a run that is no search has search.md")
	}
	if err := ReadSearch(r); err != nil || r.Search != nil {
		t.Errorf("ReadSearch of no search: %+v, %v", r.Search, err)
	}
	if written, err := WriteSearchFiles(dir, nil); err != nil || written != nil {
		t.Errorf("WriteSearchFiles(nil): %v, %v", written, err)
	}
	s := searchFixture()
	written, err = WriteSearchFiles(dir, s)
	if err != nil || !slices.Equal(written, []string{"search.md", "search.json"}) {
		t.Fatalf("WriteSearchFiles: %v, %v", written, err)
	}
	back := &view.Run{Dir: dir, Command: "perflab search"}
	if err := ReadSearch(back); err != nil || back.Search == nil {
		t.Fatalf("ReadSearch: %v", err)
	}
	if got := back.Search; got.Sustained != s.Sustained || len(got.Steps) != len(s.Steps) || got.Dir != dir || got.Command != "perflab search" {
		t.Errorf("read back %+v", got)
	}
}
