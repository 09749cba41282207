package main

import (
	"fmt"
	"io"

	"frontier/predictor"
	"frontier/profiles"
)

// printRegression reports how well the regressions of --predictor
// regression describe the tables t (features from GPU hw's peaks): per
// family, the residuals of its per-series fits over every row.
func printRegression(w io.Writer, t *profiles.Tables, hw profiles.Hardware) {
	fmt.Fprintf(w, "\nregression residuals (--predictor regression: one fit per series on its roofline time on %s, its axis and a launch-overhead term; |fitted − measured| / measured over every row):\n", hw.Name)
	fits, err := predictor.SeriesFits(t, hw)
	if err != nil {
		fmt.Fprintf(w, "  %v\n", err)
		return
	}
	for _, f := range fits {
		if f.Rows > 0 {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
}
