package ramp

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// checkConfigShape walks a configuration document before it is decoded and
// refuses, naming the key, a value of the wrong shape: a list or a mapping
// where a single value belongs (the duration type would otherwise read
// `steps.duration: [30s]` as 0) or a single value where a list belongs,
// and any duration that does not parse. It also returns which key each
// line belongs to, so the decoder's own type errors can name the key.
func checkConfigShape(data []byte) (map[int]string, error) {
	lines := map[int]string{}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return lines, nil // the decoder reports syntax errors; empty is all defaults
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		if root.Tag == "!!null" {
			return lines, nil
		}
		return lines, fmt.Errorf("the document must be a mapping of keys (e.g. `steps: {duration: 30s}`), got %s", kindName(root))
	}
	return lines, walkConfig(root, "", lines)
}

func walkConfig(m *yaml.Node, prefix string, lines map[int]string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		keyNode, val := m.Content[i], deref(m.Content[i+1])
		path := prefix + keyNode.Value
		lines[keyNode.Line] = path
		markLines(val, path, lines)
		k := keyByName(path)
		if k == nil {
			if val.Kind == yaml.MappingNode {
				if err := walkConfig(val, path+".", lines); err != nil {
					return err
				}
			}
			continue // an unknown key: the decoder names it
		}
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			continue // no value keeps the default
		}
		if strings.HasPrefix(k.Type, "list") {
			if val.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s: expected a %s (e.g. [a, b]), got %s (line %d)", path, k.Type, kindName(val), val.Line)
			}
			for _, item := range val.Content {
				if item = deref(item); item.Kind != yaml.ScalarNode {
					return fmt.Errorf("%s: expected a %s, got an item that is %s (line %d)", path, k.Type, kindName(item), item.Line)
				}
			}
			continue
		}
		if val.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: expected a single %s, got %s (line %d)", path, k.Type, kindName(val), val.Line)
		}
		if k.Type == "duration" {
			if _, err := parseDuration(val.Value); err != nil {
				return fmt.Errorf("%s: %v (line %d)", path, err, val.Line)
			}
		}
	}
	return nil
}

// markLines attributes every line of a value to its key (inner keys
// overwrite when the walk reaches them).
func markLines(n *yaml.Node, path string, lines map[int]string) {
	if _, ok := lines[n.Line]; !ok || n.Kind == yaml.ScalarNode {
		lines[n.Line] = path
	}
	for _, c := range n.Content {
		markLines(c, path, lines)
	}
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the single value %q", n.Value)
	}
	return "something else"
}

func keyByName(name string) *configKey {
	for i := range configKeys {
		if configKeys[i].Name == name {
			return &configKeys[i]
		}
	}
	return nil
}

var yamlLineErr = regexp.MustCompile(`^line (\d+): (.*)$`)

// nameKeys rewrites the decoder's "line N: ..." errors as "KEY: ... (line N)".
func nameKeys(errs []string, lines map[int]string) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e
		if m := yamlLineErr.FindStringSubmatch(e); m != nil {
			n, _ := strconv.Atoi(m[1])
			if key, ok := lines[n]; ok {
				out[i] = fmt.Sprintf("%s: %s (line %d)", key, m[2], n)
			}
		}
	}
	return out
}
