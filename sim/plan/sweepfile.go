package plan

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"frontier/scenarios"
)

// Entry is one whole deployment of a sweep file: what flags cannot say
// (a disaggregated deployment, say), by name. It replaces the base
// scenario's deployment (and hardware, when given) for its points.
type Entry struct {
	Name           string                    `yaml:"name"`
	Hardware       string                    `yaml:"hardware,omitempty"`
	Deployment     *scenarios.Deployment     `yaml:"deployment,omitempty"`
	Disaggregation *scenarios.Disaggregation `yaml:"disaggregation,omitempty"`
}

// Apply puts the entry's deployment (and hardware) into sc.
func (e *Entry) Apply(sc *scenarios.Scenario) {
	if e.Hardware != "" {
		sc.Hardware = e.Hardware
	}
	sc.Deployment, sc.Disaggregation = nil, nil
	if e.Deployment != nil {
		d := *e.Deployment
		sc.Deployment = &d
	}
	if e.Disaggregation != nil {
		g := *e.Disaggregation
		sc.Disaggregation = &g
	}
}

// File is a --sweep YAML file:
//
//	vary:                      # axes, as --vary, in loop order
//	  max-num-seqs: [64, 128, 256]
//	  request-rate: "2:10:2"   # START:STOP:STEP, or "a,b,c"
//	zip: false                 # true: pair the axes' values
//	deployments:               # whole deployments, the outermost loop
//	  - name: 1p1d
//	    disaggregation: {prefill: {instances: 1, deployment: {...}}, decode: {...}}
//	  - name: tp2
//	    deployment: {model: ..., tensor_parallel_size: 2}
//
// Deployment blocks are the scenario file's (docs/SCENARIO.md), checked
// key by key.
type File struct {
	Axes        []Axis
	Zip         bool
	Deployments []Entry
}

// LoadFile reads a --sweep file. Errors name the file and the key.
func LoadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--sweep: %w", err)
	}
	f, err := ParseFile(data)
	if err != nil {
		return nil, fmt.Errorf("--sweep %s: %w", path, err)
	}
	return f, nil
}

// ParseFile decodes a sweep file (see File).
func ParseFile(data []byte) (*File, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("malformed YAML: %w", err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want a mapping with vary, zip and/or deployments")
	}
	out := &File{}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i].Value, m.Content[i+1]
		switch key {
		case "vary":
			if val.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("vary: a mapping of KEY: [values] or KEY: \"START:STOP:STEP\"")
			}
			written := map[string]string{} // flag key → the key as the file wrote it
			for j := 0; j+1 < len(val.Content); j += 2 {
				a, err := fileAxis(val.Content[j].Value, val.Content[j+1])
				if err != nil {
					return nil, err
				}
				if first, ok := written[a.Key]; ok {
					return nil, fmt.Errorf("vary.%s: the flag %s is varied twice (also as vary.%s); give all its values under one key",
						val.Content[j].Value, a.Key, first)
				}
				written[a.Key] = val.Content[j].Value
				out.Axes = append(out.Axes, a)
			}
		case "zip":
			if err := val.Decode(&out.Zip); err != nil {
				return nil, fmt.Errorf("zip: true or false, got %q", val.Value)
			}
		case "deployments":
			if val.Kind != yaml.SequenceNode {
				return nil, fmt.Errorf("deployments: a list of {name, deployment | disaggregation, hardware}")
			}
			names := map[string]bool{}
			for j, n := range val.Content {
				e, err := fileEntry(n)
				if err != nil {
					return nil, fmt.Errorf("deployments[%d]: %w", j, err)
				}
				if names[e.Name] {
					return nil, fmt.Errorf("deployments[%d].name: %q is used twice", j, e.Name)
				}
				names[e.Name] = true
				out.Deployments = append(out.Deployments, e)
			}
		default:
			return nil, fmt.Errorf("unknown key %q (allowed: vary, zip, deployments)", key)
		}
	}
	return out, nil
}

func fileAxis(key string, n *yaml.Node) (Axis, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		a, err := ParseVary(key + "=" + n.Value)
		if err != nil {
			return a, fmt.Errorf("vary.%s: %w", key, err)
		}
		return a, nil
	case yaml.SequenceNode:
		a := Axis{Key: FlagKey(key)}
		for _, v := range n.Content {
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return a, fmt.Errorf("vary.%s: each value is a scalar (a flag's text)", key)
			}
			a.Values = append(a.Values, v.Value)
		}
		if len(a.Values) == 0 {
			return a, fmt.Errorf("vary.%s: no values", key)
		}
		return a, nil
	}
	return Axis{}, fmt.Errorf("vary.%s: a list of values or \"START:STOP:STEP\"", key)
}

// fileEntry decodes one deployments item, checking the deployment block's
// keys as the scenario loader does.
func fileEntry(n *yaml.Node) (Entry, error) {
	var e Entry
	if n.Kind != yaml.MappingNode {
		return e, fmt.Errorf("a mapping {name, deployment | disaggregation, hardware}")
	}
	body := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			e.Name = v.Value
		case "hardware":
			e.Hardware = v.Value
		case "deployment", "disaggregation":
			body.Content = append(body.Content, k, v)
		default:
			return e, fmt.Errorf("unknown key %q (allowed: name, hardware, deployment, disaggregation)", k.Value)
		}
	}
	if strings.TrimSpace(e.Name) == "" || strings.ContainsAny(e.Name, " \t\n,=") {
		return e, fmt.Errorf("name: required, without spaces, commas or '=' (it labels the points)")
	}
	if len(body.Content) != 2 {
		return e, fmt.Errorf("%s: give exactly one of deployment or disaggregation", e.Name)
	}
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(body); err != nil {
		return e, err
	}
	sc, err := scenarios.Parse(buf.Bytes())
	if err != nil {
		return e, fmt.Errorf("%s: %w", e.Name, err)
	}
	e.Deployment, e.Disaggregation = sc.Deployment, sc.Disaggregation
	return e, nil
}
