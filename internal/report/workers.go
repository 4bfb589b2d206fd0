package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/view"
)

// workersSection is a distributed phase's Workers table: one row per
// worker, its rate, its CPU and its client-bound verdict, and a line for
// each worker that failed.
func workersSection(d *doc, p *view.Phase, level int) {
	if len(p.Workers) == 0 {
		return
	}
	d.heading(level, "Workers")
	t := &table{Title: "Workers", Head: []string{"Worker", "Host", "State", "Requests", "Rate", "CPU p99", "Cores", "Lag p99", "Client-bound"},
		Right: []bool{true, false, false, true, true, true, true, true, false}}
	var notes []item
	for _, w := range p.Workers {
		cpu, cores, lag := "–", "–", "–"
		if w.HasCPU {
			cpu, cores, lag = num3(w.CPUP99), num3(w.Cores), dur(w.LagP99)
		}
		bound := "no"
		if w.ClientBound {
			bound = strong("yes") + ": " + w.ClientWhy
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(w.Index), dash(w.Host), w.State, fmt.Sprint(w.Requests), rateText(round1(w.Rate)),
			cpu, cores, lag, bound})
		t.Fail = append(t.Fail, w.Failed() || w.ClientBound)
		if w.Failed() {
			notes = append(notes, item{text: fmt.Sprintf("%s %s: %s", w.Name(), w.State, w.Message), warning: true})
		}
	}
	d.table(t)
	if len(notes) > 0 {
		d.list(notes...)
	}
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// terminalWorkers writes, for each distributed phase, a line per worker.
func terminalWorkers(w io.Writer, r *view.Run) {
	for _, c := range r.AllCells() {
		for _, p := range c.Phases {
			if len(p.Workers) == 0 {
				continue
			}
			fmt.Fprintf(w, "\nworkers of profile %s:\n", p.Profile)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "worker\thost\tstate\trequests\trate\tcpu p99\tclient-bound\t")
			for _, wk := range p.Workers {
				cpu, bound := "–", "no"
				if wk.HasCPU {
					cpu = num3(wk.CPUP99) + "/" + num3(wk.Cores)
				}
				if wk.ClientBound {
					bound = "YES"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t\n", wk.Index, dash(wk.Host), wk.State, wk.Requests, rateText(round1(wk.Rate)), cpu, bound)
			}
			tw.Flush()
			for _, wk := range p.Workers {
				switch {
				case wk.Failed():
					fmt.Fprintf(w, "warning: %s %s: %s\n", wk.Name(), wk.State, wk.Message)
				case wk.ClientBound:
					fmt.Fprintf(w, "warning: client-bound: %s: %s\n", wk.Name(), wk.ClientWhy)
				}
			}
		}
	}
}

// jsonWorker is a worker of a phase in summary.json.
type jsonWorker struct {
	Index       int      `json:"index"`
	Host        string   `json:"host"`
	State       string   `json:"state"`
	Message     string   `json:"message"`
	Requests    int64    `json:"requests"`
	Rate        float64  `json:"rate"`
	CPUP99      *float64 `json:"cpu_p99_cores"`
	Cores       *float64 `json:"cores"`
	LagP99Ms    *float64 `json:"lag_p99_ms"`
	ClientBound bool     `json:"client_bound"`
	ClientWhy   string   `json:"client_why"`
}

func jsonWorkers(ws []view.Worker) []jsonWorker {
	var out []jsonWorker
	for _, w := range ws {
		jw := jsonWorker{Index: w.Index, Host: w.Host, State: w.State, Message: w.Message, Requests: w.Requests,
			Rate: round6(w.Rate), ClientBound: w.ClientBound, ClientWhy: w.ClientWhy}
		if w.HasCPU {
			cpu, cores, lag := round6(w.CPUP99), round6(w.Cores), round6(ms(w.LagP99))
			jw.CPUP99, jw.Cores, jw.LagP99Ms = &cpu, &cores, &lag
		}
		out = append(out, jw)
	}
	return out
}
