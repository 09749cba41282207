package scenarios

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// checkKeys walks a decoded YAML tree against the Go type it decodes into
// and reports the first unknown key or wrongly typed scalar by its key path
// (for example `deployment.max_num_seqs: must be an integer, got "x"`).
// yaml.v3 reports such errors by line only, and loses KnownFields inside
// custom unmarshalers, so the scenario walks the tree itself.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return checkKeys(n.Content[0], t, path)
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(Rate(0)) {
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float" && !strings.EqualFold(strings.TrimLeft(n.Value, "+."), "inf")) {
			return fmt.Errorf("%s: must be a number of requests/s or inf, got %q", path, n.Value)
		}
		return nil
	}
	if t == reflect.TypeOf(Distribution{}) && n.Kind == yaml.ScalarNode {
		if n.Tag != "!!int" && n.Tag != "!!float" {
			return fmt.Errorf("%s: must be a number or {distribution: fixed|exponential|uniform, …}, got %q", path, n.Value)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: must be a mapping of keys", orRoot(path))
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			fields[tag] = t.Field(i).Type
			names = append(names, tag)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			ft, ok := fields[key]
			if !ok {
				return fmt.Errorf("%s: unknown key (allowed: %s)", join(path, key), strings.Join(names, ", "))
			}
			if err := checkKeys(n.Content[i+1], ft, join(path, key)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s: must be a list", path)
		}
		for i, c := range n.Content {
			if c.Kind == yaml.ScalarNode && c.Tag == "!!null" {
				return fmt.Errorf("%s[%d]: empty entry (null)", path, i)
			}
			if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: must be a mapping of keys", path)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkKeys(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return fmt.Errorf("%s: must be an integer, got %q", path, n.Value)
		}
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			return fmt.Errorf("%s: must be a number, got %q", path, n.Value)
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return fmt.Errorf("%s: must be true or false, got %q", path, n.Value)
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: must be a string", path)
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "scenario"
	}
	return path
}
