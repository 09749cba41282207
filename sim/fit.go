package sim

import (
	"errors"
	"fmt"

	"frontier/predictor"
	"frontier/profiles"
	"frontier/scenarios"
)

// Fit is the smallest tensor-parallel deployment of a model on one
// hardware preset that vLLM would start: its TP size and its memory plan.
type Fit struct {
	TP     int
	Setup  *Setup
	Memory predictor.MemoryPlan
}

// SmallestTP resolves model on hardware at TP 1, 2, 4, … up to one node
// (TP sizes dividing the attention heads), with vLLM's defaults and
// max_model_len maxModelLen (0 = the model's), and returns the first that
// starts. An error that more GPUs cannot fix (the model or its
// quantization is not priced on this hardware) is returned at once; when
// no size fits, the last memory refusal is.
func SmallestTP(model, hardware string, maxModelLen int) (Fit, error) {
	hw, err := profiles.LookupHardware(hardware)
	if err != nil {
		return Fit{}, err
	}
	m, err := profiles.LoadModel(model)
	if err != nil {
		return Fit{}, err
	}
	var last error
	for tp := 1; tp <= hw.GPUsPerNode; tp *= 2 {
		if m.NumHeads%tp != 0 {
			continue
		}
		d := scenarios.DefaultDeployment()
		d.Model, d.TensorParallelSize, d.MaxModelLen = model, tp, maxModelLen
		sc := &scenarios.Scenario{Name: "fit", Hardware: hardware, Deployment: &d, Workload: scenarios.Workload{
			Dataset:  "random",
			Random:   &scenarios.RandomData{NumPrompts: 1, InputLen: 16, OutputLen: 2},
			Arrivals: scenarios.DefaultArrivals(),
		}}
		st, err := Resolve(sc)
		if err == nil {
			return Fit{TP: tp, Setup: st, Memory: st.Memory}, nil
		}
		var mem *predictor.MemoryError
		if !errors.As(err, &mem) {
			return Fit{}, err
		}
		last = err
	}
	if last == nil {
		last = fmt.Errorf("no tensor-parallel size up to %d divides %d attention heads", hw.GPUsPerNode, m.NumHeads)
	}
	return Fit{}, last
}
