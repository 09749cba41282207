package scenarios

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExamplesLoadAndValidate checks every example users copy. The CLI
// tests (cmd/frontier) run them end to end.
func TestExamplesLoadAndValidate(t *testing.T) {
	files, err := filepath.Glob("examples/*.yaml")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 4)
	datasets := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := Load(f)
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			assert.Equal(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), s.Name, "name matches the file")
			assert.Nil(t, s.GroundTruth, "examples are not gate cells")
			datasets[s.Workload.Dataset] = true
			if s.Workload.Dataset == "trace" {
				_, err := os.Stat(s.Resolve(s.Workload.Trace.Path))
				require.NoError(t, err, "the trace lies beside the scenario")
			}
			if s.Workload.Dataset == "lengths" {
				_, err := os.Stat(s.Resolve(s.Workload.Lengths.Path))
				require.NoError(t, err, "the lengths file lies beside the scenario")
			}
		})
	}
	assert.Equal(t, map[string]bool{"random": true, "shared_prefix": true, "trace": true, "sessions": true, "lengths": true}, datasets)
}

// TestReadmeDocumentsEveryKey keeps scenarios/README.md in step with the
// types: every YAML key must appear there as `key`.
func TestReadmeDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(data)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(tp reflect.Type, path string) {
		for tp.Kind() == reflect.Pointer || tp.Kind() == reflect.Slice {
			tp = tp.Elem()
		}
		if tp.Kind() != reflect.Struct || seen[tp] {
			return
		}
		seen[tp] = true
		for i := 0; i < tp.NumField(); i++ {
			key := strings.Split(tp.Field(i).Tag.Get("yaml"), ",")[0]
			if key == "" || key == "-" {
				continue
			}
			assert.Contains(t, readme, "`"+key+"`", "README.md does not document %s%s", path, key)
			walk(tp.Field(i).Type, path+key+".")
		}
	}
	walk(reflect.TypeOf(Scenario{}), "")
}
