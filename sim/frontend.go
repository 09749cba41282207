package sim

// apiServer is one vLLM API server process as a FIFO server: it takes in
// requests (tokenize, hand-off) and streams output tokens (detokenize,
// SSE) one piece of work at a time, so at high token rates a request's
// intake and every token wait behind the work ahead of them. There is one
// per engine core: vLLM's default api_server_count is the DP size, and
// each disaggregated instance runs its own.
type apiServer struct {
	free int64 // when the server is next idle, ns
}

// serve queues work of svc ns arriving at at and returns when it is done.
func (a *apiServer) serve(at, svc int64) int64 {
	a.free = max(a.free, at) + svc
	return a.free
}
