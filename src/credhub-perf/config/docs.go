package config

import (
	"fmt"
	"strings"
)

// ReferenceTable renders the key table of docs/configuration.md from Keys,
// so the document cannot drift from the code (a test compares).
func ReferenceTable() string {
	var b strings.Builder
	b.WriteString(ListFlagRule + "\n\n")
	b.WriteString("| key | type | default | flag | description |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, k := range Keys {
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
