package predictor

// Chunk is one request's prefill chunk in a step: NewTokens computed after
// PrefixTokens already in the KV cache (cached prefix or earlier chunks).
type Chunk struct {
	NewTokens    int
	PrefixTokens int
}

// Batch describes one engine step as the model runner executes it.
// Counts are tokens or requests as named.
type Batch struct {
	NumTokens    int     // scheduled tokens (prefill + decode)
	PaddedTokens int     // tokens the GEMMs run on (CUDA-graph size; = NumTokens eager)
	Graph        bool    // runs as a CUDA graph (piecewise when Prefills is non-empty)
	Prefills     []Chunk // prefill chunks
	NumDecodes   int     // decode requests, one token each
	DecodeCtxSum int64   // sum of decode requests' context lengths, tokens
	NumSampled   int     // requests that sample a token at the end of the step
	NumRequests  int     // scheduled requests (logits rows)
	NumRunning   int     // running requests (host scheduling work)
}

// StepTime is one step's predicted duration and its parts, nanoseconds.
type StepTime struct {
	DeviceNs int64 // GPU kernel time of the forward pass
	LaunchNs int64 // host time launching it (kernel launches or graph replay)
	HostNs   int64 // other host work: schedule, prepare inputs, sample, process outputs
	WallNs   int64 // the step's duration on the engine's clock
}
