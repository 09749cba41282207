package sim

import (
	"fmt"

	"frontier/scenarios"
	"frontier/sim/engine"
)

// schedulingPolicy resolves a deployment's scheduling_policy ("" = fcfs,
// vLLM's default) to its name and the engine's registered policy.
func schedulingPolicy(d *scenarios.Deployment, path string) (string, engine.Policy, error) {
	name := d.SchedulingPolicy
	if name == "" {
		name = "fcfs"
	}
	p, err := engine.LookupPolicy(name)
	if err != nil {
		return "", nil, fmt.Errorf("%s.scheduling_policy (--scheduling-policy): %w", path, err)
	}
	return name, p, nil
}

// checkPriorities refuses, as vLLM does, a request with a nonzero priority
// under a policy that does not schedule by priority: vLLM's input
// processor raises "Got priority X but Priority scheduling is not
// enabled." (vllm/v1/engine/processor.py, process_inputs) and the API
// server answers 400 to that request. Where vLLM fails such requests one
// by one, the simulator refuses the run: a workload that carries
// priorities under fcfs is a setup mistake, and failing part of it
// silently would be a wrong answer.
func (st *Setup) checkPriorities() error {
	for _, d := range st.Pools {
		if engine.UsesPriority(d.Engine.Policy) {
			continue
		}
		for _, stage := range st.Plan.Stages {
			for _, r := range stage.Requests {
				if r.Priority == 0 {
					continue
				}
				path := "deployment"
				if d.Pool != "" {
					path = "disaggregation." + d.Pool + ".deployment"
				}
				return fmt.Errorf("%s.scheduling_policy (--scheduling-policy) is %s, and request %d of the workload has priority %d: vLLM refuses it with \"Got priority %d but Priority scheduling is not enabled.\" (use scheduling policy priority)",
					path, d.SchedulingPolicy, r.ID, r.Priority, r.Priority)
			}
		}
	}
	return nil
}
