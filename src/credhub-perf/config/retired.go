package config

import (
	"fmt"
	"strings"
)

// RetiredKey is a configuration key that credhub-perf no longer has. A
// file, a flag or a BOSH property that still sets it is refused with Msg
// (exit status 2, before anything is sent) rather than as an unknown key:
// the operator learns what changed and what to do, not only that a key
// is wrong.
type RetiredKey struct {
	Name string // the key (and --flag)
	Prop string // its former BOSH job property, kept in the spec without a default so that a manifest setting it fails at deploy time
	Msg  string // "was removed: " what changed and what to do, after the name
}

// Retired lists the removed keys.
var Retired = []RetiredKey{
	{
		Name: "tester.fast_rsa", Prop: "tester.fast_rsa",
		Msg: "was removed: Go's crypto/rsa signs every TLS handshake (credhub-perf's own RSA signer is gone); remove it",
	},
}

// retiredKey is the retired key of that name, or nil.
func retiredKey(name string) *RetiredKey {
	for i := range Retired {
		if Retired[i].Name == name {
			return &Retired[i]
		}
	}
	return nil
}

// RetiredError is the refusal of a retired key.
type RetiredError struct {
	Key  *RetiredKey
	Line int    // line of a configuration file, 0 for a flag
	Name string // how it was written (--tester.fast_rsa, tester.fast_rsa)
}

func (e *RetiredError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d) %s", e.Name, e.Line, e.Key.Msg)
	}
	return fmt.Sprintf("%s %s", e.Name, e.Key.Msg)
}

// retiredFlag refuses a command-line argument that sets a retired key
// (--tester.fast_rsa, -tester.fast_rsa=true), or returns nil.
func retiredFlag(arg string) error {
	if !strings.HasPrefix(arg, "-") {
		return nil
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	if k := retiredKey(name); k != nil {
		return &RetiredError{Key: k, Name: "--" + name}
	}
	return nil
}

// RetiredProperties is the `retired` part of the rule table that the
// job's validation_properties.yml.erb embeds: property name to message.
func RetiredProperties() map[string]any {
	out := map[string]any{}
	for _, k := range Retired {
		if k.Prop != "" {
			out[k.Prop] = k.Msg
		}
	}
	return out
}

// retiredDescription is the spec description of a retired key's property.
func retiredDescription(prop string) string {
	for _, k := range Retired {
		if k.Prop == prop {
			return "Removed, kept only to refuse it: any value fails the deploy. " + strings.TrimPrefix(k.Msg, "was removed: ") + "."
		}
	}
	panic("config: no retired key has the property " + prop)
}

// RetiredMsg is the message of the retired key name (hey refuses its own
// flag for the same key with it).
func RetiredMsg(name string) string {
	if k := retiredKey(name); k != nil {
		return k.Msg
	}
	panic("config: no retired key " + name)
}
