package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxConfigBytes caps a configuration file: a complete one is a few KB,
// so anything near this is a wrong path (a device, a log, a tarball).
const MaxConfigBytes = 1 << 20

// maxConfigNodes caps the values a document holds once its YAML aliases
// are expanded: every key of Keys, lists included, is a few hundred; an
// alias bomb (a few lines that expand to millions) is refused before the
// decoder expands it.
const maxConfigNodes = 10000

// LoadFile overlays the YAML (or JSON) file on c. Unknown keys are
// errors so that a typo never silently falls back to a default.
func LoadFile(c *Config, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	// Read at most one byte past the cap: /dev/zero or a FIFO that never
	// ends must not be read to its end.
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return LoadBytes(c, data, path)
}

// LoadBytes is LoadFile on bytes already read.
func LoadBytes(c *Config, data []byte, name string) error {
	if len(data) > MaxConfigBytes {
		return fmt.Errorf("config file %s: larger than %d KiB; a configuration is a small YAML file: check the path given to --config", name, MaxConfigBytes>>10)
	}
	lines, err := checkConfigShape(data)
	if err != nil {
		return fmt.Errorf("config file %s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file is all defaults
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fmt.Errorf("config file %s: %s", name, strings.Join(nameKeys(te.Errors, lines), "; "))
		}
		return fmt.Errorf("config file %s: %s", name, oneLine(err.Error()))
	}
	return nil
}

// oneLine joins a multi-line parser message.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// parseOneDocument parses data as YAML nodes and refuses a second
// document (the decoder would read the first and silently ignore the
// rest) and aliases that expand beyond maxConfigNodes. It returns nil,
// nil on a syntax error, which the decoder then reports with its line.
func parseOneDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, fmt.Errorf("holds more than one YAML document, and a later one does not parse: %s; keep a single document (no second `---`)", oneLine(err.Error()))
	default:
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		return nil, fmt.Errorf("holds more than one YAML document (a second one holds line %d); keep a single document: remove the second `---` and merge its keys into the first", line)
	}
	if n, recursive := expandedSize(&doc, map[*yaml.Node]int{}); recursive {
		return nil, fmt.Errorf("a YAML alias refers to the value that contains it; write the value out instead of the alias")
	} else if n > maxConfigNodes {
		return nil, fmt.Errorf("its YAML aliases expand to more than %d values (an alias bomb?); write the values out instead of using anchors and aliases", maxConfigNodes)
	}
	return &doc, nil
}

// expandedSize counts the nodes of n with every alias expanded, without
// expanding them (each node is counted once and its size reused), and
// saturates just above maxConfigNodes so deep bombs cannot overflow.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int) (int, bool) {
	if v, ok := memo[n]; ok {
		return v, v < 0
	}
	memo[n] = -1 // in progress: reaching it again is a cycle
	size := 1
	kids := n.Content
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		size, kids = 0, []*yaml.Node{n.Alias}
	}
	for _, k := range kids {
		v, rec := expandedSize(k, memo)
		if rec {
			return 0, true
		}
		size = min(size+v, maxConfigNodes+1)
	}
	memo[n] = size
	return size, false
}

// checkConfigShape walks a configuration document before it is decoded and
// refuses, naming the key, a value of the wrong shape: a list or a mapping
// where a single value belongs (the duration type would otherwise read
// `steps.duration: [30s]` as 0) or a single value where a list belongs,
// and any duration that does not parse. It also returns which key each
// line belongs to, so the decoder's own type errors can name the key.
func checkConfigShape(data []byte) (map[int]string, error) {
	lines := map[int]string{}
	doc, err := parseOneDocument(data)
	if err != nil {
		return lines, err
	}
	if doc == nil || len(doc.Content) == 0 {
		return lines, nil // the decoder reports syntax errors; empty is all defaults
	}
	root := derefNode(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		if root.Tag == "!!null" {
			return lines, nil
		}
		return lines, fmt.Errorf("the document must be a mapping of keys (e.g. `steps: {duration: 30s}`), got %s", kindName(root))
	}
	var unknown error
	if err := walkConfig(root, "", lines, &unknown); err != nil {
		return lines, err
	}
	return lines, unknown
}

func walkConfig(m *yaml.Node, prefix string, lines map[int]string, unknown *error) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		keyNode, val := m.Content[i], derefNode(m.Content[i+1])
		path := prefix + keyNode.Value
		lines[keyNode.Line] = path
		markLines(val, path, lines)
		k := keyByName(path)
		if r := retiredKey(path); k == nil && r != nil {
			return &RetiredError{Key: r, Line: keyNode.Line, Name: path}
		}
		if k == nil {
			if !isSection(path) {
				// Refused here rather than by the decoder, to name the key
				// meant; after the walk, so a wrong shape is named first.
				if *unknown == nil {
					*unknown = fmt.Errorf("%s: unknown key (line %d)%s", path, keyNode.Line, didYouMean(path, knownPaths()))
				}
				continue
			}
			if val.Kind == yaml.MappingNode {
				if err := walkConfig(val, path+".", lines, unknown); err != nil {
					return err
				}
			}
			continue // a section of the wrong shape: the decoder names it
		}
		if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			continue // no value keeps the default
		}
		if strings.HasPrefix(k.Type, "list") {
			if val.Kind != yaml.SequenceNode {
				return fmt.Errorf("%s: expected a %s (e.g. [a, b]), got %s (line %d)", path, k.Type, kindName(val), val.Line)
			}
			for _, item := range val.Content {
				if item = derefNode(item); item.Kind != yaml.ScalarNode {
					return fmt.Errorf("%s: expected a %s, got an item that is %s (line %d)", path, k.Type, kindName(item), item.Line)
				}
				if item.Tag == "!!null" {
					return fmt.Errorf("%s: expected a %s, got an empty item (line %d)", path, k.Type, item.Line)
				}
				if err := scalarOK(strings.TrimPrefix(k.Type, "list of "), item); err != nil {
					return fmt.Errorf("%s: %v (line %d)", path, err, item.Line)
				}
			}
			continue
		}
		if val.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: expected a single %s, got %s (line %d)", path, k.Type, kindName(val), val.Line)
		}
		if err := scalarOK(k.Type, val); err != nil {
			return fmt.Errorf("%s: %v (line %d)", path, err, val.Line)
		}
	}
	return nil
}

// isSection is true for a path that holds keys (steps, cleanup.database).
func isSection(path string) bool {
	for _, k := range Keys {
		if strings.HasPrefix(k.Name, path+".") {
			return true
		}
	}
	return false
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

func derefNode(n *yaml.Node) *yaml.Node {
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

// scalarOK refuses a single value that is not of the key's type, in the
// words a flag of that type uses (and the BOSH template, which checks the
// same types on the properties before it writes them).
func scalarOK(typ string, n *yaml.Node) error {
	switch typ {
	case "int":
		var v int
		if n.Tag != "!!int" || n.Decode(&v) != nil {
			return fmt.Errorf("%q is not an integer", n.Value)
		}
	case "number":
		var f float64
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", n.Value)
		}
	case "bool":
		if n.Tag != "!!bool" {
			return fmt.Errorf("%q is not true or false", n.Value)
		}
	case "duration":
		if _, err := parseDuration(n.Value); err != nil {
			return err
		}
	}
	return nil
}
