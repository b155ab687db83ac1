package replay

import (
	"fmt"
	"strings"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/results"
)

// Configure reads c.Workload, when set, and makes c run its mix: scenario
// mix (scenarios left at the default, or mix alone) with the weights from
// the file. It returns the workload for meta.json and the run (nil
// without one). Errors are one line, before any load.
func Configure(c *config.Config) (*results.Workload, error) {
	if c.Workload == "" {
		return nil, nil
	}
	def := config.Default().Scenarios
	s := c.Scenarios
	if !(len(s) == 1 && (s[0] == "mix" || (len(def) == 1 && s[0] == def[0]))) {
		return nil, fmt.Errorf("workload: a workload is replayed as the mix scenario alone, but scenarios is %s: leave scenarios out or set it to mix", strings.Join(s, ","))
	}
	if c.Mix != (config.MixConfig{}) {
		return nil, fmt.Errorf("workload: the mix weights come from %s, but mix.get/mix.set/mix.interpolate are set (%d/%d/%d): leave them out", c.Workload, c.Mix.Get, c.Mix.Set, c.Mix.Interpolate)
	}
	w, err := Load(c.Workload)
	if err != nil {
		return nil, err
	}
	c.Scenarios = []string{"mix"}
	c.Mix = config.MixConfig{Get: w.Weights.Get, Set: w.Weights.Set, Interpolate: w.Weights.Interpolate}
	return w, nil
}
