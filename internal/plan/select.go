package plan

import (
	"fmt"
	"strings"
)

// Profile returns the profile called name; the error lists the plan's
// profiles.
func (p *Plan) Profile(name string) (Profile, error) {
	for _, pr := range p.Profiles {
		if pr.Name == name {
			return pr, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown profile %q; the plan has %s", name, p.profileNames())
}

// Select returns a copy of p that keeps only the profiles named in list, a
// comma-separated list such as "small,large", in the order given. An empty
// list keeps every profile. Naming an unknown profile is an error that
// lists the plan's profiles.
func (p *Plan) Select(list string) (*Plan, error) {
	if strings.TrimSpace(list) == "" {
		return p, nil
	}
	q := *p
	q.Profiles = nil
	var unknown []string
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		pr, err := p.Profile(name)
		if err != nil {
			unknown = append(unknown, fmt.Sprintf("%q", name))
			continue
		}
		q.Profiles = append(q.Profiles, pr)
	}
	switch {
	case len(unknown) == 1:
		return nil, fmt.Errorf("unknown profile %s; the plan has %s", unknown[0], p.profileNames())
	case len(unknown) > 1:
		return nil, fmt.Errorf("unknown profiles %s; the plan has %s", strings.Join(unknown, ", "), p.profileNames())
	case len(q.Profiles) == 0:
		return nil, fmt.Errorf("no profile selected by %q; the plan has %s", list, p.profileNames())
	}
	return &q, nil
}

// profileNames lists the profiles for error messages.
func (p *Plan) profileNames() string {
	names := make([]string, len(p.Profiles))
	for i, pr := range p.Profiles {
		names[i] = pr.Name
	}
	return strings.Join(names, ", ")
}
