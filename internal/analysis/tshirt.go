package analysis

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// TotalComponent names the row (or fit) of the system under test as a whole.
const TotalComponent = "total"

// SizeProfile is one t-shirt size: its name, the load it was measured at,
// and the sizing of each of its components in display order.
type SizeProfile struct {
	Size    string // e.g. "XS"
	Load    string // e.g. "~100 GB/day (1.2 MB/s)"
	Sizings []Sizing
}

// TShirtRow is one component's (or the total's) requests and limits in a
// size. A zero Quantity is a figure the data can't support; NoCPULimit says
// the strategy sets no CPU limit. A total's String is exact Kubernetes
// notation ("8288Mi"); a summary table may prefer its Value in GiB or cores.
type TShirtRow struct {
	Size, Load    string
	Component     string // TotalComponent for the total row
	CPURequest    Quantity
	CPULimit      Quantity
	NoCPULimit    bool
	MemoryRequest Quantity
	MemoryLimit   Quantity
	// The VPA recommender's lower and upper bounds around each request
	// (Recommendation.Lower, Upper); zero for the other strategies, and
	// in the total when any component has none.
	CPULower, CPUUpper       Quantity
	MemoryLower, MemoryUpper Quantity
}

// HasBounds reports whether the row carries VPA bounds.
func (r TShirtRow) HasBounds() bool {
	return !r.CPUUpper.IsZero() || !r.MemoryUpper.IsZero()
}

// TShirt is one size: a row per component, the total and the warnings of
// every component's sizing.
type TShirt struct {
	Size, Load string
	Strategy   string // "" when the components were sized with different strategies
	Components []TShirtRow
	Total      TShirtRow
	Warnings   []string
	// Held says whether the system held the profile's load (sustain.go),
	// as CellInsights judged it; the zero value is a load held.
	Held Held
	// Verified is the verdict of perflab size --verify on the size, when
	// it was run; nil when not. Curves are its limit searches (perflab
	// size --search-limits), CPU first, when they were run.
	Verified *Verified
	Curves   []*LimitCurve
}

// HasBounds reports whether any component of the size carries VPA bounds.
func (t TShirt) HasBounds() bool {
	for _, r := range t.Components {
		if r.HasBounds() {
			return true
		}
	}
	return false
}

// TShirtSizes builds one TShirt per profile, in order. A total is the sum of
// the components' rounded figures; it is zero (no figure) when any
// component lacks that figure, with a warning, because a partial total
// reads as the whole system's need. The total CPU limit is zero with
// NoCPULimit set when any component has no CPU limit. The total of a VPA
// bound is the sum of the components' bounds, zero (without a warning:
// bounds are reported, not applied) when any lacks one.
func TShirtSizes(profiles []SizeProfile) []TShirt {
	out := make([]TShirt, 0, len(profiles))
	for _, p := range profiles {
		out = append(out, tshirt(p))
	}
	return out
}

func tshirt(p SizeProfile) TShirt {
	t := TShirt{Size: p.Size, Load: p.Load}
	t.Total = TShirtRow{Size: p.Size, Load: p.Load, Component: TotalComponent,
		CPURequest: Quantity{Resource: ResourceCPU}, CPULimit: Quantity{Resource: ResourceCPU},
		MemoryRequest: Quantity{Resource: ResourceMemory}, MemoryLimit: Quantity{Resource: ResourceMemory}}
	bounds := []*Quantity{&t.Total.CPULower, &t.Total.CPUUpper, &t.Total.MemoryLower, &t.Total.MemoryUpper}
	for i, r := range []Resource{ResourceCPU, ResourceCPU, ResourceMemory, ResourceMemory} {
		*bounds[i] = Quantity{Resource: r}
	}
	partial := false
	missing := map[string][]string{}
	for i, sz := range p.Sizings {
		if i == 0 {
			t.Strategy = sz.Strategy
		} else if sz.Strategy != t.Strategy {
			t.Strategy = ""
		}
		row := TShirtRow{Size: p.Size, Load: p.Load, Component: sz.Component,
			CPURequest: sz.CPU.Request, CPULimit: sz.CPU.Limit, NoCPULimit: sz.CPU.NoLimit,
			MemoryRequest: sz.Memory.Request, MemoryLimit: sz.Memory.Limit,
			CPULower: sz.CPU.Lower, CPUUpper: sz.CPU.Upper, MemoryLower: sz.Memory.Lower, MemoryUpper: sz.Memory.Upper}
		t.Components = append(t.Components, row)
		for j, q := range []Quantity{row.CPULower, row.CPUUpper, row.MemoryLower, row.MemoryUpper} {
			partial = partial || q.IsZero()
			bounds[j].Amount += q.Amount
		}
		t.Warnings = append(t.Warnings, sz.Warnings...)
		t.Total.NoCPULimit = t.Total.NoCPULimit || row.NoCPULimit
		for _, f := range []struct {
			what     string
			sum      *Quantity
			q        Quantity
			noFigure bool
		}{
			{"CPU request", &t.Total.CPURequest, row.CPURequest, false},
			{"CPU limit", &t.Total.CPULimit, row.CPULimit, row.NoCPULimit},
			{"memory request", &t.Total.MemoryRequest, row.MemoryRequest, false},
			{"memory limit", &t.Total.MemoryLimit, row.MemoryLimit, false},
		} {
			if f.q.IsZero() && !f.noFigure {
				missing[f.what] = append(missing[f.what], sz.Component)
			}
			f.sum.Amount += f.q.Amount
		}
	}
	t.dropPartialTotals(missing)
	if partial {
		for _, q := range bounds {
			q.Amount = 0
		}
	}
	return t
}

// dropPartialTotals zeroes each total that some component has no figure
// for, and says so.
func (t *TShirt) dropPartialTotals(missing map[string][]string) {
	if t.Total.NoCPULimit {
		t.Total.CPULimit.Amount = 0
	}
	for _, f := range []struct {
		what string
		q    *Quantity
	}{{"CPU request", &t.Total.CPURequest}, {"CPU limit", &t.Total.CPULimit},
		{"memory request", &t.Total.MemoryRequest}, {"memory limit", &t.Total.MemoryLimit}} {
		if cs := missing[f.what]; len(cs) > 0 {
			f.q.Amount = 0
			t.Warnings = append(t.Warnings, fmt.Sprintf("size %s: no total %s, because %s %s none", t.Size, f.what, joinNames(cs), hasHave(len(cs))))
		}
	}
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1 : len(names)-1] {
		out += ", " + n
	}
	return out + " and " + names[len(names)-1]
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// k8sResources is a container's resources block; fields keep the key order
// requests, limits and cpu, memory.
type k8sResources struct {
	Resources k8sRequestsLimits `yaml:"resources"`
	// Annotations say what perflab size --verify found, when it ran.
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// VerifiedAnnotation is the annotation that carries a size's verdict.
const VerifiedAnnotation = "perflab.io/verified"

type k8sRequestsLimits struct {
	Requests *k8sList `yaml:"requests,omitempty"`
	Limits   *k8sList `yaml:"limits,omitempty"`
}

type k8sList struct {
	CPU    string `yaml:"cpu,omitempty"`
	Memory string `yaml:"memory,omitempty"`
}

func (r TShirtRow) k8s() k8sResources {
	list := func(cpu, mem Quantity) *k8sList {
		if cpu.IsZero() && mem.IsZero() {
			return nil
		}
		return &k8sList{CPU: cpu.String(), Memory: mem.String()}
	}
	return k8sResources{Resources: k8sRequestsLimits{
		Requests: list(r.CPURequest, r.MemoryRequest),
		Limits:   list(r.CPULimit, r.MemoryLimit),
	}}
}

// YAML is the row's Kubernetes resources block:
//
//	resources:
//	  requests:
//	    cpu: 500m
//	    memory: 2Gi
//	  limits:
//	    cpu: 750m
//	    memory: 3Gi
//
// A figure the data can't support, and krr's CPU limit, are left out.
func (r TShirtRow) YAML() ([]byte, error) {
	return encodeYAML(r.k8s())
}

// YAML is the size's resources blocks under each component's name, in the
// profile's order, as in a Helm values or operator template:
//
//	ingester:
//	  resources:
//	    requests: …
func (t TShirt) YAML() ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	for _, row := range t.Components {
		var v yaml.Node
		k := row.k8s()
		if t.Verified != nil {
			k.Annotations = map[string]string{VerifiedAnnotation: t.Verified.Annotation()}
		}
		if err := v.Encode(k); err != nil {
			return nil, fmt.Errorf("cannot encode the resources of %s: %w", row.Component, err)
		}
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: row.Component}, &v)
	}
	return encodeYAML(doc)
}

func encodeYAML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("cannot encode resources as YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("cannot encode resources as YAML: %w", err)
	}
	return b.Bytes(), nil
}
