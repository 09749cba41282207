package profiles

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// defaultVersions is the vLLM version of each preset's default embedded
// table set. h100-sxm keeps 0.14.0, the set the gate and the host fit were
// made with: the gate with the 0.19.0 and 0.24.0 sets is worse (13 and 12
// of 18 cells pass against 14; median gated error 2.4 % and 4.1 % against
// 1.5 %). h200-sxm keeps 0.19.0. The new GPUs take their newest complete
// set: 0.24.0 on B200, GB200, L40S and RTX PRO 6000 (every GEMM and MoE
// dtype aiconfigurator measured there, fp8 KV-cache attention, balanced
// MoE routing), 0.14.0 on A100 (its only collection).
var defaultVersions = map[string]string{
	"h100-sxm":     "0.14.0",
	"h200-sxm":     "0.19.0",
	"b200-sxm":     "0.24.0",
	"gb200":        "0.24.0",
	"a100-sxm":     "0.14.0",
	"l40s":         "0.24.0",
	"rtx-pro-6000": "0.24.0",
}

// reuseYAML is an aiconfigurator reuse.yaml: a version folder that
// declares which other version's measurements stand for its tables.
type reuseYAML struct {
	Reuse []struct {
		Table       string `yaml:"table"`
		FromVersion string `yaml:"from_version"`
	} `yaml:"reuse"`
}

// pickVersion chooses the version folder of dir (<system>/<family>/
// <framework>) that a table set of vLLM version want reads file from:
//
//  1. want itself, when it holds the file;
//  2. else the version want's reuse.yaml names for the table
//     (aiconfigurator's own declaration that those measurements stand);
//  3. else the newest version below want that holds it (the forward fill
//     of aiconfigurator's legacy reuse rule: a table collected once serves
//     later versions until re-collected; e.g. the MLA core tables were
//     collected under vLLM 0.14.0 only).
//
// want "" picks the newest version holding the file. why says which rule
// applied ("" for 1 and for want ""); ver is "" when none holds it.
func pickVersion(fsys fs.FS, dir, file, want string) (ver, why string, err error) {
	vers, err := versionDirs(fsys, dir)
	if err != nil || len(vers) == 0 {
		return "", "", err
	}
	holds := func(v string) bool {
		_, err := fs.Stat(fsys, path.Join(dir, v, file))
		return err == nil
	}
	if want == "" {
		for i := len(vers) - 1; i >= 0; i-- {
			if holds(vers[i]) {
				return vers[i], "", nil
			}
		}
		return "", "", nil
	}
	if holds(want) {
		return want, "", nil
	}
	table := strings.TrimSuffix(file, path.Ext(file))
	if data, err := fs.ReadFile(fsys, path.Join(dir, want, "reuse.yaml")); err == nil {
		var r reuseYAML
		if err := yaml.Unmarshal(data, &r); err != nil {
			return "", "", fmt.Errorf("%s: %w", path.Join(dir, want, "reuse.yaml"), err)
		}
		for _, e := range r.Reuse {
			if e.Table == table && holds(e.FromVersion) {
				return e.FromVersion, fmt.Sprintf("%s: vLLM %s's (reuse.yaml of %s)", table, e.FromVersion, want), nil
			}
		}
	}
	for i := len(vers) - 1; i >= 0; i-- {
		if versionLess(vers[i], want) && holds(vers[i]) {
			return vers[i], fmt.Sprintf("%s: vLLM %s's (not collected under %s)", table, vers[i], want), nil
		}
	}
	return "", "", nil
}

// versionDirs lists the version-named subfolders of dir, oldest first.
func versionDirs(fsys fs.FS, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var vers []string
	for _, e := range entries {
		if e.IsDir() {
			vers = append(vers, e.Name())
		}
	}
	sort.Slice(vers, func(i, j int) bool { return versionLess(vers[i], vers[j]) })
	return vers, nil
}

// setVersions lists the vLLM versions a system folder holds a table set
// for: version folders of its vllm GEMM, attention or MoE tables, oldest
// first.
func setVersions(fsys fs.FS, root string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, fam := range []string{"gemm", "attention", "moe"} {
		vers, err := versionDirs(fsys, path.Join(root, fam, "vllm"))
		if err != nil {
			return nil, err
		}
		for _, v := range vers {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return versionLess(out[i], out[j]) })
	return out, nil
}

// TableVersions returns the vLLM versions of the table sets embedded for
// hardware (oldest first) and the one DefaultTables uses.
func TableVersions(hardware string) (versions []string, def string, err error) {
	name, ok := canonicalHardware(hardware)
	if !ok {
		return nil, "", fmt.Errorf("unknown hardware %q (allowed: %s)", hardware, strings.Join(KnownHardware(), ", "))
	}
	hw, err := LookupHardware(name)
	if err != nil {
		return nil, "", err
	}
	versions, err = setVersions(embeddedTables, path.Join(embeddedTablesRoot, hw.System))
	return versions, defaultVersions[hw.TablesHardware], err
}

// CheckVersion refuses a version the embedded sets of hardware lack.
func CheckVersion(hardware, version string) error {
	versions, _, err := TableVersions(hardware)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if v == version {
			return nil
		}
	}
	return fmt.Errorf("no %s tables embedded for vLLM %s (embedded: %s; other versions: --profile-dir with aiconfigurator's %s folder)",
		hardware, version, strings.Join(versions, ", "), hardwareSystem(hardware))
}

func hardwareSystem(hardware string) string {
	if h, err := LookupHardware(hardware); err == nil {
		return h.System
	}
	return hardware
}

// moeFromOtherVersions gives t a MoEFallback: for an expert shape (per
// dtype) t's MoE table lacks, the rows of the newest other embedded vLLM
// version under root that measured it. aiconfigurator measures some
// models' experts only in later collections (Llama-4-Scout's 5120 × 8192,
// top-1 of 16, in vLLM 0.24.0's H100 and H200 tables), and the same GPU's
// timing of that shape beats substituting another shape. The other
// versions' rows of the dtype are decoded on first use only.
func moeFromOtherVersions(t *Tables, root, version string) error {
	vers, err := versionDirs(embeddedTables, path.Join(root, "moe", "vllm"))
	if err != nil {
		return err
	}
	var others []string
	for i := len(vers) - 1; i >= 0; i-- {
		file := path.Join(root, "moe", "vllm", vers[i], "moe_perf"+rowsExt)
		if _, err := fs.Stat(embeddedTables, file); err == nil && vers[i] != version {
			others = append(others, vers[i])
		}
	}
	if len(others) == 0 {
		return nil
	}
	t.MoEFallback = func(dtype string, hidden, inter, topk, experts int64) ([]MoERow, string, error) {
		for _, v := range others {
			all, err := embeddedPart[MoERow](path.Join(root, "moe", "vllm", v, "moe_perf"+rowsExt), []string{dtype})
			if err != nil {
				return nil, "", err
			}
			var rows []MoERow
			for _, r := range all {
				if r.Dtype == dtype && r.Hidden == hidden && r.Inter == inter && r.TopK == topk && r.NumExperts == experts {
					rows = append(rows, r)
				}
			}
			if len(rows) > 0 {
				return rows, v, nil
			}
		}
		return nil, "", nil
	}
	return nil
}
