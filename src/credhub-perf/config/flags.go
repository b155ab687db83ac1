package config

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// flagValue records a flag's raw value; it is applied after the config
// file so that flags override the file whatever their position.
type flagValue struct {
	key   *Key
	calls *[]flagCall
}

type flagCall struct {
	key   *Key
	value string
}

func (f flagValue) String() string { return "" }
func (f flagValue) Set(v string) error {
	*f.calls = append(*f.calls, flagCall{f.key, v})
	return nil
}

// boolFlagValue lets a bare --keepalive mean true instead of taking the
// next argument as its value.
type boolFlagValue struct{ flagValue }

func (boolFlagValue) IsBoolFlag() bool { return true }

// Overrides holds the configuration flags given on a command line.
type Overrides struct {
	calls []flagCall
}

// BindFlags registers one flag per configuration key (its dotted name, and
// its alias when it has one) on fs.
func BindFlags(fs *flag.FlagSet) *Overrides {
	o := &Overrides{}
	for i := range Keys {
		k := &Keys[i]
		var v flag.Value = flagValue{k, &o.calls}
		if k.Type == "bool" {
			v = boolFlagValue{flagValue{k, &o.calls}}
		}
		// The flag package takes the first `quoted` word of a help text as
		// the value's placeholder, so the help's own quotes go and the
		// type is quoted instead (-label string, not -label 2 instances).
		help := strings.ReplaceAll(k.Help, "`", "")
		switch {
		case k.Type == "bool":
			help = fmt.Sprintf("%s (default %s)", help, k.Default)
		case strings.HasPrefix(k.Type, "list"):
			help = fmt.Sprintf("%s (`%s`, default %s; repeated flags add to the list)", help, placeholder(k.Type), k.Default)
		default:
			help = fmt.Sprintf("%s (`%s`, default %s)", help, placeholder(k.Type), k.Default)
		}
		fs.Var(v, k.Name, help)
		if k.Alias != "" {
			alias := "same as --" + k.Name
			if k.Type != "bool" {
				alias += fmt.Sprintf(" (`%s`)", placeholder(k.Type))
			}
			fs.Var(v, k.Alias, alias)
		}
	}
	return o
}

// ListFlagRule is how every list key's flag behaves given more than once,
// for -h and docs/configuration.md.
const ListFlagRule = "A list flag given several times accumulates: `--scenarios get --scenarios set` is `--scenarios get,set`; the flags' items replace the config file's list."

// Apply sets the flagged values on c, returning one error per bad value.
// A list key's flags accumulate (ListFlagRule): the first clears the
// file's list, each adds its items, so no repeated flag is dropped.
func (o *Overrides) Apply(c *Config) []error {
	var errs []error
	cleared := map[string]bool{}
	for _, call := range o.calls {
		if strings.HasPrefix(call.key.Type, "list") && !cleared[call.key.Name] {
			switch p := call.key.field(c).(type) {
			case *[]string:
				*p = nil
			case *[]float64:
				*p = nil
			}
			cleared[call.key.Name] = true
		}
		if err := call.key.set(c, call.value); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", call.key.Name, err))
		}
	}
	return errs
}

// placeholder names a flag's value in -h output.
func placeholder(typ string) string {
	if strings.HasPrefix(typ, "list") {
		return "list"
	}
	return typ
}

// ParseFlags parses args like fs.Parse, except that a boolean flag followed
// by a separate true or false (--keepalive false, the `--KEY VALUE` form
// every other key takes) reads that value, while a bare --keepalive means
// true and leaves the next argument alone. A retired key's flag is a
// *RetiredError.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			if a == "--" {
				out = append(out, args[i+1:]...)
				break
			}
			continue
		}
		if err := retiredFlag(a); err != nil {
			return err
		}
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if i+1 < len(args) {
				if _, err := strconv.ParseBool(args[i+1]); err == nil {
					out[len(out)-1] = a + "=" + args[i+1]
					i++
				}
			}
			continue
		}
		if i+1 < len(args) {
			i++ // the value, even if it starts with '-'
			out = append(out, args[i])
		}
	}
	return fs.Parse(out)
}
