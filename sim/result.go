package sim

import (
	"frontier/predictor"
)

// Result is a finished simulation.
type Result struct {
	Requests []RequestRecord // in ID order
	ITL      *Histogram      // every inter-token gap, ns
	Steps    int64
	EndNs    int64 // time of the last event
	Memory   predictor.MemoryPlan
	Coverage predictor.Coverage
	Notes    []string
}

func (s *Sim) result() *Result {
	res := &Result{ITL: s.itl, EndNs: s.now}
	res.Requests = make([]RequestRecord, len(s.records))
	for _, r := range s.records {
		res.Requests[r.out.ID] = r.out
	}
	for _, c := range s.cores {
		res.Steps += c.Steps
	}
	return res
}
