// Command rowsgen writes the embedded operator tables' rows form: one
// <table>.rows beside every <table>.parquet under profiles/data/aiconfigurator
// that the loader reads (profiles.GenerateRows). `go generate ./profiles`
// runs it from the profiles folder; TestEmbeddedRowsCurrent fails until it
// has run after a parquet file (or a row type) changed.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"frontier/profiles"
)

const root = "data/aiconfigurator"

func main() {
	files, err := profiles.GenerateRows(os.DirFS("."), root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rowsgen:", err)
		os.Exit(1)
	}
	// Rows files whose parquet is gone are stale: remove them.
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".rows") {
			if _, ok := files[filepath.ToSlash(p)]; !ok {
				fmt.Println("rowsgen: removing", p)
				return os.Remove(p)
			}
		}
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "rowsgen:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if old, err := os.ReadFile(name); err == nil && string(old) == string(files[name]) {
			continue
		}
		if err := os.WriteFile(name, files[name], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "rowsgen:", err)
			os.Exit(1)
		}
		fmt.Printf("rowsgen: wrote %s (%d bytes)\n", name, len(files[name]))
	}
}
