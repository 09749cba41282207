package calibration

import "testing"

// BenchmarkGate runs the whole gate: every shared run simulated (all
// stages, in parallel across cores) and compared.
func BenchmarkGate(b *testing.B) {
	files, err := ScenarioFiles("../scenarios/gate")
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		rows, err := Gate(files, GateOptions{})
		if err != nil || len(rows) == 0 {
			b.Fatal(err)
		}
	}
}
