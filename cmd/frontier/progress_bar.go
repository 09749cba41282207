package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressBar reports sweep progress on stderr: on a terminal a bar
// rewritten in place (done / total, ETA); otherwise (logs, CI) a line
// per ~10 %. Nothing with quiet. Safe for one caller at a time.
func progressBar(w io.Writer, what string, quiet bool) func(done, total int) {
	if quiet {
		return nil
	}
	tty := isTerminal(w)
	var mu sync.Mutex
	start := time.Now()
	lastTenth := 0
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		eta := "?"
		if done > 0 {
			left := time.Duration(float64(time.Since(start)) * float64(total-done) / float64(done))
			eta = left.Round(time.Second).String()
		}
		if tty {
			const width = 30
			fill := width * done / max(total, 1)
			fmt.Fprintf(w, "\r[%s%s] %d/%d %s, ETA %s ", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, what, eta)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		if t := 10 * done / max(total, 1); t > lastTenth || done == total {
			lastTenth = t
			fmt.Fprintf(w, "%d/%d %s done, ETA %s\n", done, total, what, eta)
		}
	}
}

// progressPrinter reports progress on stderr for runs of 2,000 requests or
// more: a line rewritten in place on a terminal, a line per quarter
// otherwise (logs, CI).
func progressPrinter(w io.Writer) func(done, total int) {
	tty := isTerminal(w)
	lastQuarter := 0
	return func(done, total int) {
		if total < 2000 {
			return
		}
		if tty {
			fmt.Fprintf(w, "\rsimulated %d/%d requests", done, total)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		if q := 4 * done / total; q > lastQuarter {
			lastQuarter = q
			fmt.Fprintf(w, "simulated %d/%d requests\n", done, total)
		}
	}
}

// isTerminal says whether w is a terminal, where progress is rewritten in
// place; logs and CI get whole lines instead.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
