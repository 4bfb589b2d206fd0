package registry

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/stats"
)

// echoConfig is a fake driver's Config: the params are the Config alone.
type echoConfig struct {
	Reply string `yaml:"reply"`
	File  string `yaml:"file"`
	Token string `yaml:"token"`
}

func (echoConfig) ParamKeys() driver.ParamKeys {
	return driver.ParamKeys{Place: []string{"file"}, Secret: []string{"token"}}
}

func (c echoConfig) Validate() []error {
	if c.Reply == "" {
		return []error{driver.ParamErrorf("reply", "reply is required")}
	}
	return nil
}

func (c echoConfig) Redacted() string { return "echo " + c.Reply }

func (c *echoConfig) Paths() []*string { return []*string{&c.File} }

type echo struct{ cfg echoConfig }

func (e *echo) Do(_ context.Context, _ int, r *driver.Result) {
	r.Op, r.Class, r.BytesRecv = "echo", stats.OK, int64(len(e.cfg.Reply))
}

func newEcho(c echoConfig) (*echo, error) { return &echo{cfg: c}, nil }

// TestAFakeDriverIsOneLine: a driver whose params are its Config is its
// package and one line in drivers (here the test's): a plan can name
// it, its params decode strictly with every problem at its line, its
// file path resolves against the plan's directory, its place and secret
// keys are known to the run's records, and the driver it builds answers.
func TestAFakeDriverIsOneLine(t *testing.T) {
	drivers["echo"] = entry{decode: plain(newEcho), params: echoConfig{}}
	t.Cleanup(func() { delete(drivers, "echo") })

	if !Has("echo") || !strings.Contains(Names(), "echo") {
		t.Fatalf("the registry does not know echo: %s", Names())
	}
	_, errs := Decode("echo", Input{Params: params(t, "          file: x\n          colour: blue\n"), File: "p.yaml", Dir: "/plans"})
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	if all := strings.Join(got, "\n"); !strings.Contains(all, `p.yaml:11:11: params: unknown key "colour"`) || !strings.Contains(all, "p.yaml:10:11: params: reply is required") {
		t.Errorf("problems:\n%s", all)
	}
	spec, errs := Decode("echo", Input{Params: params(t, "          reply: hi\n          file: data/x.json\n          token: ${TOKEN}\n"), File: "p.yaml", Dir: "/plans"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if spec.Target != "echo hi" {
		t.Errorf("target %q", spec.Target)
	}
	d, err := spec.New()
	if err != nil {
		t.Fatal(err)
	}
	var r driver.Result
	d.Do(context.Background(), 0, &r)
	if e := d.(*echo); r.Class != stats.OK || r.BytesRecv != 2 || e.cfg.File != filepath.Join("/plans", "data/x.json") || e.cfg.Token != "s3cr3t" {
		t.Errorf("result %+v, config %+v", r, e.cfg)
	}
	if keys := PlaceKeys("echo"); strings.Join(keys, ",") != "file,token" {
		t.Errorf("place keys %q", keys)
	}
	if stored := string(StoredParams(params(t, "          reply: hi\n          token: literal\n"), "echo")); strings.Contains(stored, "literal") {
		t.Errorf("stored params hold the token: %s", stored)
	}
}

// TestS3CAFileIsRelativeToThePlan: s3 is a plain driver; its ca_file, a
// path of its Config, resolves against the plan's directory.
func TestS3CAFileIsRelativeToThePlan(t *testing.T) {
	dir := t.TempDir()
	_, errs := Decode("s3", Input{Params: params(t, "          endpoint: https://127.0.0.1:9000\n          bucket: bkt\n          ca_file: ca.pem\n          objects: 1\n"), File: "p.yaml", Dir: dir})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "p.yaml:12:20: params: cannot read ca file: open "+filepath.Join(dir, "ca.pem")) {
		t.Errorf("a ca_file missing beside the plan: %v", errs)
	}
}
