package report

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/view"
)

func TestSizeFiles(t *testing.T) {
	files, err := SizeFiles(sizesRun())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[0].Name != "sizes/default-pico.yaml" || files[2].Name != "sizes/default-medium.yaml" {
		t.Fatalf("files %+v", files)
	}
	golden(t, "sizes-default-pico.yaml", files[0].Data)
	c := &view.Cell{Index: 2, Name: "gomemlimit=1GiB,ballast=0"}
	for _, tt := range []struct{ got, want string }{
		{SizeFileName(c, "vus/40"), "sizes/gomemlimit=1GiB,ballast=0-vus_40.yaml"},
		{SizeFileName(&view.Cell{Implicit: true}, "low"), "sizes/run-low.yaml"},
		{SizeFileName(&view.Cell{Index: 3}, "x y"), "sizes/cell3-x_y.yaml"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if !strings.HasPrefix(string(files[0].Data), "# perflab: suggested size \"pico\" of run tempo-sizing, cell default\n") {
		t.Errorf("file starts %q", files[0].Data[:80])
	}
}
