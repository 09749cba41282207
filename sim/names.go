package sim

import (
	"fmt"
	"slices"
	"strings"

	"frontier/profiles"
	"frontier/scenarios"
	"frontier/sim/router"
)

// CheckNames checks the names a scenario picks from frontier's lists, with
// the lookups Resolve uses and without building anything: the hardware
// (the scenario's and each pool's), each deployment's model, quantization
// method and scheduling policy, the replicas' router, and the vLLM version
// of the embedded tables. A name outside the lists is a typo, bad input,
// where Resolve's other errors refuse a deployment as vLLM would (a
// sweep's refused row); a quantization method vLLM has and no table
// prices is such a refusal too, and stays for Resolve. Errors read as
// Resolve's for the same name.
func CheckNames(sc *scenarios.Scenario) error {
	if _, err := profiles.LookupHardware(sc.Hardware); err != nil {
		return fmt.Errorf("hardware: %w", err)
	}
	type dep struct {
		path, hw string
		d        *scenarios.Deployment
	}
	var deps []dep
	if sc.Deployment != nil {
		deps = append(deps, dep{"deployment", sc.Hardware, sc.Deployment})
	} else if g := sc.Disaggregation; g != nil {
		for _, p := range []struct {
			name string
			pool *scenarios.Pool
		}{{"prefill", &g.Prefill}, {"decode", &g.Decode}} {
			hw := sc.Hardware
			if p.pool.Hardware != "" {
				hw = p.pool.Hardware
				if _, err := profiles.LookupHardware(hw); err != nil {
					return fmt.Errorf("disaggregation.%s.hardware: %w", p.name, err)
				}
			}
			deps = append(deps, dep{"disaggregation." + p.name + ".deployment", hw, &p.pool.Deployment})
		}
	}
	for _, x := range deps {
		if _, err := profiles.LoadModel(resolveModel(sc, x.d.Model)); err != nil {
			return fmt.Errorf("%s.model: %w", x.path, err)
		}
		if q := x.d.Quantization; q != "" && !profiles.IsQuantMethod(q) {
			return fmt.Errorf("%s.quantization: unknown quantization method %q (allowed: %s; or null, --quantization None: the checkpoint's own, as vLLM reads an unset optional argument)", x.path, q, strings.Join(profiles.KnownQuantMethods(), ", "))
		}
		if _, _, err := schedulingPolicy(x.d, x.path); err != nil {
			return err
		}
		if sc.VLLMVersion != "" && (sc.Profiles == nil || *sc.Profiles == "") {
			if err := profiles.CheckVersion(x.hw, sc.VLLMVersion); err != nil {
				return fmt.Errorf("vllm_version: %w", err)
			}
		}
	}
	if r := sc.Replicas; r != nil && r.Router != "" && !slices.Contains(router.Names(), r.Router) {
		return fmt.Errorf("replicas.router (--router): unknown router policy %q (allowed: %s)", r.Router, strings.Join(router.Names(), ", "))
	}
	return nil
}
