package sim

// StartupLog is what vLLM logs at start-up for each pool of the setup
// (predictor.MemoryPlan.StartupLog: model loading, available KV cache
// memory, "GPU KV cache size: 440,176 tokens", "Maximum concurrency for
// 4,096 tokens per request: 107.46x"), prefixed with the pool's name in a
// disaggregated deployment.
func (st *Setup) StartupLog() []string {
	var out []string
	for _, d := range st.Pools {
		prefix := ""
		if d.Pool != "" {
			prefix = d.Pool + " pool: "
		}
		for _, l := range d.Memory.StartupLog(d.Engine.MaxModelLen, d.Engine.BlockSize) {
			out = append(out, prefix+l)
		}
	}
	return out
}
