package predictor

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
)

// HostModel is the engine core's host (CPU) time per step, in named terms,
// each linear in the step's batch: a fixed part plus per-request and
// per-token parts. Units: ns, ns per request, ns per token.
//
// Defaults are engineering estimates of vLLM V1's Python engine core
// (profiles of vLLM 0.10–0.12 show scheduling and input preparation in the
// tens of microseconds plus about 1–2 µs per request each); the calibration
// file replaces them with values fitted on training cells (frontier
// calibrate).
type HostModel struct {
	ScheduleNs         float64 `json:"schedule_ns"`           // Scheduler.schedule fixed cost
	SchedulePerReqNs   float64 `json:"schedule_per_req_ns"`   // per running request
	PrepareNs          float64 `json:"prepare_ns"`            // _prepare_inputs fixed
	PreparePerReqNs    float64 `json:"prepare_per_req_ns"`    // per scheduled request
	PreparePerTokenNs  float64 `json:"prepare_per_token_ns"`  // per scheduled token
	SampleNs           float64 `json:"sample_ns"`             // sampler host side fixed
	ProcessNs          float64 `json:"process_ns"`            // update_from_output + output processing fixed
	ProcessPerReqNs    float64 `json:"process_per_req_ns"`    // per sampled request
	GraphLaunchNs      float64 `json:"graph_launch_ns"`       // one CUDA-graph replay launch
	StepGapNs          float64 `json:"step_gap_ns"`           // GPU idle per step (input copy, sampled-token copy back, sync)
	LayerGapNs         float64 `json:"layer_gap_ns"`          // GPU idle per layer per step (kernel boundaries the isolated tables do not see)
	KernelLaunchNs     float64 `json:"kernel_launch_ns"`      // one eager kernel launch: 8.8 µs, PyTorch eager loop of 1,000 tiny kernels on our H200 (profiles/measured ops "launch")
	TokenizePerTokenNs float64 `json:"tokenize_per_token_ns"` // API server CPU, per prompt token (serialized)
	RequestOverheadNs  float64 `json:"request_overhead_ns"`   // per request, latency outside the API server's CPU (HTTP, client, hand-off)
	StreamPerTokenNs   float64 `json:"stream_per_token_ns"`   // per output token, latency after the API server (network, client)
	// APIRequestNs and APITokenNs are the API server process's CPU work per
	// request (accept, tokenize call, hand-off) and per output token
	// (detokenize, SSE): one Python process serves them in turn, so they
	// queue behind each other at high token rates (vLLM's default
	// --api-server-count 1).
	APIRequestNs float64 `json:"api_request_ns"`
	APITokenNs   float64 `json:"api_token_ns"`
}

// MaxHostTermNs bounds every host term: 10^12 ns (1,000 s) is far above
// any CPU overhead and keeps step times inside int64 nanoseconds.
const MaxHostTermNs = 1e12

// Validate checks that every term is a non-negative number of ns up to
// MaxHostTermNs
// (a negative overhead would let steps or requests finish before they
// start); the error names the field as the calibration file spells it.
func (h HostModel) Validate() error {
	v := reflect.ValueOf(h)
	t := v.Type()
	for i := range t.NumField() {
		x := v.Field(i).Float()
		if math.IsNaN(x) || x < 0 || x > MaxHostTermNs {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			return fmt.Errorf("host.%s: must be a number of ns in [0, %.0e], got %v", name, MaxHostTermNs, x)
		}
	}
	return nil
}

// DefaultHost is the uncalibrated host model.
func DefaultHost() HostModel {
	return HostModel{
		ScheduleNs: 60e3, SchedulePerReqNs: 2e3,
		PrepareNs: 120e3, PreparePerReqNs: 3e3, PreparePerTokenNs: 20,
		SampleNs: 60e3, ProcessNs: 80e3, ProcessPerReqNs: 4e3,
		GraphLaunchNs: 30e3, KernelLaunchNs: 8.8e3, StepGapNs: 0, LayerGapNs: 0,
		TokenizePerTokenNs: 200, RequestOverheadNs: 1.5e6, StreamPerTokenNs: 100e3,
	}
}

// HostNs is the step's host work other than launching the forward pass.
func (h *HostModel) HostNs(b *Batch) float64 {
	reqs := float64(b.NumRequests)
	return h.ScheduleNs + h.SchedulePerReqNs*float64(b.NumRunning) +
		h.PrepareNs + h.PreparePerReqNs*reqs + h.PreparePerTokenNs*float64(b.NumTokens) +
		h.SampleNs + h.ProcessNs + h.ProcessPerReqNs*float64(b.NumSampled)
}

// APIInServiceNs is the API server CPU time to take in a request of
// prompt tokens, ns.
func (h HostModel) APIInServiceNs(prompt int) int64 {
	return int64(h.APIRequestNs + h.TokenizePerTokenNs*float64(prompt))
}

//go:embed calibrated/h100-sxm.json
var h100Calibration []byte

// DefaultHostFor is the host model a deployment on hardware uses when its
// scenario names no calibration file: the fit committed in
// predictor/calibrated/h100-sxm.json (frontier calibrate on the Llama-2-7b
// and Mixtral H100 runs, vLLM 0.1x). Host terms are the CPU and runtime of
// vLLM, not the GPU, so the same fit serves H200 and H800 until a fit on
// their own ground truth exists; the note says so.
func DefaultHostFor(hardware string) (HostModel, string) {
	h, ok := embeddedHost()
	if !ok {
		return DefaultHost(), "host model: embedded calibration unreadable; uncalibrated defaults"
	}
	if hardware == "h100-sxm" {
		return h, ""
	}
	return h, "host model: the h100-sxm calibration (vLLM's CPU-side terms) also used for " + hardware
}

// embeddedHost is the embedded calibration's host model (DefaultHost's
// terms where it names none), parsed once a process. It reads the file's
// top-level keys up to "host" and decodes only that object: the file is
// 24 KB of JSON (the fit's cells and residuals), "host" is near its start,
// and unmarshalling all of it cost a twentieth of a one-request run's
// instructions (TestEmbeddedHostIsTheFilesHost checks both agree). ok is
// false when there is no "host" object to read.
var embeddedHost = sync.OnceValues(func() (HostModel, bool) {
	h := DefaultHost()
	dec := json.NewDecoder(bytes.NewReader(h100Calibration))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return h, false
		}
		if key == "host" {
			err := dec.Decode(&h)
			return h, err == nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return h, false
		}
	}
	return h, false
})

// CalibrationJSON is the embedded default calibration file (h100-sxm), for
// reports that say which cells the fit saw.
func CalibrationJSON() []byte { return h100Calibration }
