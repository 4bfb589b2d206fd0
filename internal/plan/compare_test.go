package plan

import (
	"encoding/json"
	"strings"
	"testing"
)

const sideBySidePlan = `name: vm-vs-prom
components:
  - {name: prom, group: prometheus, attach: {pid: 1}}
  - {name: vminsert, group: vm, attach: {pid: 2}}
  - {name: vmstorage, group: vm, attach: {pid: 3}}
profiles:
  - name: small
    duration: 10s
    workloads:
      - {name: write-prom, driver: remotewrite, rate: 100/s, params: {url: "http://127.0.0.1:9090/api/v1/write"}}
      - {name: write-vm, driver: remotewrite, rate: 100/s, params: {url: "http://127.0.0.1:8480/insert/0/prometheus/api/v1/write"}}
compare:
  - {a: prometheus, b: vm}
  - {a: write-prom, b: write-vm}
`

func TestComparePairs(t *testing.T) {
	p := mustParse(t, sideBySidePlan)
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	if len(p.Compare) != 2 || p.Compare[0].A != "prometheus" || p.Compare[1].B != "write-vm" || p.Compare[0].String() != "vm against prometheus" {
		t.Fatalf("pairs %+v", p.Compare)
	}
	if k := p.SideKind("vm"); k != SideComponents {
		t.Errorf("vm is %q", k)
	}
	if k := p.SideKind("write-vm"); k != SideWorkload {
		t.Errorf("write-vm is %q", k)
	}
	if cs := p.SideComponents("vm"); strings.Join(cs, ",") != "vminsert,vmstorage" {
		t.Errorf("group vm: %v", cs)
	}
	if cs := p.SideComponents("prom"); strings.Join(cs, ",") != "prom" {
		t.Errorf("component prom: %v", cs)
	}
	d, err := p.Describe()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Compare []struct{ A, B string } `json:"compare"`
	}
	if err := json.Unmarshal(d, &back); err != nil || len(back.Compare) != 2 || back.Compare[1].A != "write-prom" {
		t.Errorf("described %s: %v", d, err)
	}
	if again := mustParse(t, string(d)); len(again.Compare) != 2 {
		t.Errorf("the description parses to %d pairs", len(again.Compare))
	}
}

func TestErrorsCompare(t *testing.T) {
	base := strings.Split(sideBySidePlan, "compare:\n")[0]
	runErrorCases(t, []errorCase{
		{"not a list", base + "compare: {a: vm}\n", []string{`plan.yaml:12:10: compare: want a list, got a mapping`}},
		{"keys", base + "compare:\n  - {a: vm, c: prom}\n", []string{
			`plan.yaml:13:5: compare: b needs a component, a group or a workload`, `plan.yaml:13:13: compare: unknown key "c"; want one of: a, b`}},
		{"unknown and same", base + "compare:\n  - {a: mimir, b: vm}\n  - {a: vm, b: vm}\n", []string{
			`plan.yaml:13:9: compare: a "mimir" is not a component, a group or a workload of the plan`,
			`plan.yaml:14:16: compare: a and b are both "vm"`}},
		{"kinds and overlap", base + "compare:\n  - {a: vm, b: write-vm}\n  - {a: vm, b: vmstorage}\n", []string{
			`plan.yaml:13:16: compare: a "vm" is a component or group and b "write-vm" a workload; compare components with components, workloads with workloads`,
			`plan.yaml:14:16: compare: component vmstorage is on both sides (a "vm", b "vmstorage")`}},
		{"different load", strings.Replace(base, "{name: write-vm, driver: remotewrite, rate: 100/s", "{name: write-vm, driver: remotewrite, rate: 200/s", 1) +
			"compare:\n  - {a: write-prom, b: write-vm}\n", []string{
			`plan.yaml:13:24: compare: in profile small the workloads write-prom and write-vm differ in driver, model or load; a side-by-side comparison needs the same load`}},
	})
}
