// Package sim is the discrete-event core: the event queue and clock, the
// client (arrivals, stages, max_concurrency, timeouts), the engine cores
// around engine.Scheduler with their step timing, routing across engines,
// and the per-request and per-step records.
//
// Time is integer nanoseconds; events at the same time run in the order
// they were scheduled, so the same inputs and seed give identical output.
// It prices nothing itself: every step goes to a predictor.Predictor.
package sim
