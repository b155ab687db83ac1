package ramp

import (
	"flag"
	"fmt"
	"sort"
)

// flagValue records a flag's raw value; it is applied after the config
// file so that flags override the file whatever their position.
type flagValue struct {
	key   *configKey
	calls *[]flagCall
}

type flagCall struct {
	key   *configKey
	value string
}

func (f flagValue) String() string { return "" }
func (f flagValue) Set(v string) error {
	*f.calls = append(*f.calls, flagCall{f.key, v})
	return nil
}

// Overrides holds the configuration flags given on a command line.
type Overrides struct {
	calls []flagCall
}

// BindFlags registers one flag per configuration key (its dotted name, and
// its alias when it has one) on fs.
func BindFlags(fs *flag.FlagSet) *Overrides {
	o := &Overrides{}
	for i := range configKeys {
		k := &configKeys[i]
		help := fmt.Sprintf("%s (%s, default %s)", k.Help, k.Type, k.Default)
		fs.Var(flagValue{k, &o.calls}, k.Name, help)
		if k.Alias != "" {
			fs.Var(flagValue{k, &o.calls}, k.Alias, "same as --"+k.Name)
		}
	}
	return o
}

// Apply sets the flagged values on c, returning one error per bad value.
func (o *Overrides) Apply(c *Config) []error {
	var errs []error
	// "scenarios" given twice means the last wins, like every other flag;
	// custom.headers accumulates on purpose.
	cleared := map[string]bool{}
	for _, call := range o.calls {
		if call.key.Name == "custom.headers" && !cleared[call.key.Name] {
			c.Custom.Headers = nil
			cleared[call.key.Name] = true
		}
		if err := call.key.set(c, call.value); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", call.key.Name, err))
		}
	}
	return errs
}

// KeyNames returns every configuration key, sorted.
func KeyNames() []string {
	var out []string
	for _, k := range configKeys {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}
