package sim

import (
	"encoding/json"
	"sync"

	"frontier/predictor"
	"frontier/profiles"
	"frontier/scenarios"
)

// The deployment memo. A planning command (capacity, sweep, plan)
// resolves the same deployment for every probe, which differs from the
// others only in its workload; resolving it (the model, the tables the
// predictor needs, the template, the memory plan) was ~7 % of a
// 50-request probe's instructions. resolveDeployment keeps what it
// resolved from embedded data only (an embedded model, the embedded
// tables: no --profile-dir), by every input it reads, and hands each
// later call a copy of it with the same notes: the same Deployment
// field for field, as it would have built it. Shared between copies, and
// never written after resolveDeployment returns: the model spec's slices
// (already shared through profiles' embedded specs), the tables, the
// template, the capture sizes.
var deploymentMemo = struct {
	mu sync.Mutex
	m  map[deploymentKey]*resolvedDeployment
}{m: map[deploymentKey]*resolvedDeployment{}}

// maxMemoDeployments bounds the memo: past it the memo starts afresh. A
// topology search on 8 GPUs resolves a few dozen deployments.
const maxMemoDeployments = 256

// deploymentKey is everything resolveDeployment reads: the scenario's
// deployment (JSON: every field, pointers followed), where it sits in the
// scenario (path), the hardware, the vLLM version and predictor the
// scenario asks for, and the host model.
type deploymentKey struct {
	deployment, path, hw, version, predictor string
	host                                     predictor.HostModel
}

// resolvedDeployment is a memo entry: the deployment and the notes its
// resolution appended to Setup.Notes.
type resolvedDeployment struct {
	d     Deployment
	notes []string
}

// memoKey is the memo's key for resolveDeployment's inputs; false when
// they are not all embedded (a model read from a file, a --profile-dir),
// which files could change between calls.
func (st *Setup) memoKey(sc *scenarios.Scenario, d *scenarios.Deployment, path, hwName string) (deploymentKey, bool) {
	if (sc.Profiles != nil && *sc.Profiles != "") || !profiles.EmbeddedModel(resolveModel(sc, d.Model)) {
		return deploymentKey{}, false
	}
	js, err := json.Marshal(d)
	if err != nil {
		return deploymentKey{}, false
	}
	return deploymentKey{deployment: string(js), path: path, hw: hwName, version: sc.VLLMVersion, predictor: sc.Predictor, host: st.Host}, true
}

// resolveDeploymentMemo is resolveDeployment through the memo: a copy of
// the deployment resolved before from the same inputs, its notes
// appended as resolveDeployment appends them. Refusals are not kept.
func (st *Setup) resolveDeploymentMemo(sc *scenarios.Scenario, d *scenarios.Deployment, path, hwName string) (*Deployment, error) {
	key, ok := st.memoKey(sc, d, path, hwName)
	if !ok {
		return st.resolveDeployment(sc, d, path, hwName)
	}
	deploymentMemo.mu.Lock()
	e := deploymentMemo.m[key]
	deploymentMemo.mu.Unlock()
	if e != nil {
		st.Notes = append(st.Notes, e.notes...)
		out := e.d
		return &out, nil
	}
	before := len(st.Notes)
	out, err := st.resolveDeployment(sc, d, path, hwName)
	if err != nil {
		return nil, err
	}
	e = &resolvedDeployment{d: *out, notes: append([]string(nil), st.Notes[before:]...)}
	deploymentMemo.mu.Lock()
	if len(deploymentMemo.m) >= maxMemoDeployments {
		deploymentMemo.m = map[deploymentKey]*resolvedDeployment{}
	}
	deploymentMemo.m[key] = e
	deploymentMemo.mu.Unlock()
	return out, nil
}
