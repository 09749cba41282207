package sim

// apiServer is one vLLM API server process as a FIFO server: it takes in
// requests (tokenize, hand-off) and streams output tokens (detokenize,
// SSE) one piece of work at a time, so at high token rates a request's
// intake and every token wait behind the work ahead of them. A pool has
// api_server_count of them per instance (vLLM's default: the DP size).
type apiServer struct {
	free int64 // when the server is next idle, ns
}

// serve queues work of svc ns arriving at at and returns when it is done.
func (a *apiServer) serve(at, svc int64) int64 {
	a.free = max(a.free, at) + svc
	return a.free
}
