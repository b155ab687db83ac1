package ramp

import (
	"io"

	"fmt"
	"gopkg.in/yaml.v3"
	"strings"
)

// ConfigReferenceTable renders the key table of docs/configuration.md from
// configKeys, so the document cannot drift from the code (a test compares).
func ConfigReferenceTable() string {
	var b strings.Builder
	b.WriteString("| key | type | default | flag | description |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, k := range configKeys {
		flags := "`--" + k.Name + "`"
		if k.Alias != "" {
			flags += ", `--" + k.Alias + "`"
		}
		def := k.Default
		if def != "(required)" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Name, k.Type, def, flags, strings.ReplaceAll(k.Help, "|", "\\|"))
	}
	return b.String()
}

func newYAMLEncoder(w io.Writer) *yaml.Encoder {
	e := yaml.NewEncoder(w)
	e.SetIndent(4)
	return e
}
