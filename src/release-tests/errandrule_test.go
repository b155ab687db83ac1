package releasetests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "gopkg.in/yaml.v3"
)

// errandInstance is one instance on which `bosh run-errand` runs bin/run.
type errandInstance struct {
	Group string
	Index int
}

// jobRunsAsErrand is the director's runs_as_errand? for the jobs of this
// release: the job's templates render a bin/run.
func jobRunsAsErrand(t *testing.T, release, job string) bool {
	t.Helper()
	if release != "credhub-perf" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "jobs", job, "spec"))
	if err != nil {
		return false
	}
	var spec struct {
		Templates map[string]string `yaml:"templates"`
	}
	if err := yaml.Unmarshal(b, &spec); err != nil {
		t.Fatalf("jobs/%s/spec: %v", job, err)
	}
	for _, dst := range spec.Templates {
		if dst == "bin/run" || dst == "bin/run.ps1" {
			return true
		}
	}
	return false
}

// errandRuns applies the director's rule (cloudfoundry/bosh
// src/bosh-director/lib/bosh/director/errand/errand_provider.rb) to an
// interpolated manifest, for `bosh run-errand NAME` without --instance on
// freshly deployed groups (instances 0..n-1):
//   - NAME is first looked up as a job that runs as an errand; every group
//     holding such a job takes part (a group of the same name only adds the
//     "Ambiguous request" warning);
//   - a `lifecycle: errand` group runs bin/run on its first instance only
//     (one LifecycleErrandStep);
//   - any other group runs it on every instance (one LifecycleServiceStep
//     each, in parallel);
//   - without such a job, NAME must be an errand group: its first instance.
func errandRuns(t *testing.T, m map[string]interface{}, name string) []errandInstance {
	t.Helper()
	igs, _ := m["instance_groups"].([]interface{})
	var groups []map[string]interface{}
	for _, ig := range igs {
		g := ig.(map[string]interface{})
		jobs, _ := g["jobs"].([]interface{})
		for _, j := range jobs {
			job := j.(map[string]interface{})
			if job["name"] == name && jobRunsAsErrand(t, fmt.Sprint(job["release"]), name) {
				groups = append(groups, g)
				break
			}
		}
	}
	if len(groups) == 0 {
		g := instanceGroup(t, m, name)
		if g["lifecycle"] != "errand" {
			t.Fatalf("instance group %s is not an errand and holds no errand job %s: run-errand fails", name, name)
		}
		groups = []map[string]interface{}{g}
	}
	var out []errandInstance
	for _, g := range groups {
		n, _ := g["instances"].(int)
		if n == 0 {
			continue
		}
		if g["lifecycle"] == "errand" {
			out = append(out, errandInstance{Group: fmt.Sprint(g["name"]), Index: 0})
			continue
		}
		for i := 0; i < n; i++ {
			out = append(out, errandInstance{Group: fmt.Sprint(g["name"]), Index: i})
		}
	}
	return out
}

// TestManifestsEveryTesterRuns: with several-testers.yml and 3 testers,
// `bosh run-errand credhub-perf` starts bin/run on all 3 instances, in the
// standalone deployment and inside a CredHub deployment; one tester alone
// stays an errand VM that exists only while it runs.
func TestManifestsEveryTesterRuns(t *testing.T) {
	standalone := filepath.Join(repoRoot(t), "manifests", "credhub-perf.yml")
	cases := []struct {
		name     string
		manifest string
		ops      []string
		want     int
	}{
		{"one tester", standalone, nil, 1},
		{"several testers", standalone, []string{"several-testers.yml"}, 3},
		{"several testers in cf-deployment", fixture(t, "cf-deployment-shape.yml"), []string{"add-to-credhub-deployment.yml", "cf-deployment.yml", "several-testers.yml"}, 3},
		{"several testers with UAA", standalone, []string{"several-testers.yml", "uaa-auth.yml"}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := boshInt(t, c.manifest, c.ops, "-v", "testers=3")
			runs := errandRuns(t, m, "credhub-perf")
			if len(runs) != c.want {
				t.Fatalf("bosh run-errand credhub-perf would run bin/run on %v; want %d instances", runs, c.want)
			}
			for i, r := range runs {
				if r.Group != "credhub-perf" || r.Index != i {
					t.Errorf("run %d on %s/%d; want credhub-perf/%d", i, r.Group, r.Index, i)
				}
			}
			props, _ := testerProps(t, m)
			if c.want > 1 {
				assertEqual(t, "tester.count", props["tester"].(map[string]interface{})["count"], c.want)
			}
		})
	}

	// Each instance the rule selects renders as its own tester (index 0, 1,
	// 2 of 3) and names the same rendezvous credential, from the
	// deployment and the instance group.
	m0 := boshInt(t, standalone, []string{"several-testers.yml"}, "-v", "testers=3", "-v", "credhub_ca_cert="+testCA)
	_, propsYAML := testerProps(t, m0)
	var rendezvous []string
	job := loadJob(t, "credhub-perf")
	for _, in := range errandRuns(t, m0, "credhub-perf") {
		// The two templates read below and the two that refuse a job (one
		// Ruby process each); the others do not read the instance.
		dir, err := renderTemplates(t, job, propsYAML, instanceSpec{Index: in.Index, Bootstrap: in.Index == 0, Deployment: fmt.Sprint(m0["name"]), Name: in.Group},
			[]string{"config/config.yml.erb", "bin/run.erb", "config/validation_properties.yml.erb", "config/validation_certificates.yml.erb"})
		if err != nil {
			t.Fatalf("rendering tester %d: %v", in.Index, err)
		}
		cfg := renderedConfig(t, dir)
		assertEqual(t, "tester.index", get(t, cfg, "tester.index"), in.Index)
		assertEqual(t, "tester.count", get(t, cfg, "tester.count"), 3)
		run := readRendered(t, dir, "bin/run")
		i := strings.Index(run, "rendezvous='")
		rendezvous = append(rendezvous, strings.SplitN(run[i:], "\n", 2)[0])
	}
	if len(rendezvous) != 3 || rendezvous[0] != "rendezvous='credhub-perf-credhub-perf'" || rendezvous[1] != rendezvous[0] || rendezvous[2] != rendezvous[0] {
		t.Errorf("the testers' rendezvous: %q; want one credential named from deployment and group", rendezvous)
	}

	// The rule tells the two shapes apart: 3 instances of an errand group
	// run one tester, whatever its instance count.
	m := boshInt(t, standalone, []string{"several-testers.yml"}, "-v", "testers=3")
	instanceGroup(t, m, "credhub-perf")["lifecycle"] = "errand"
	if runs := errandRuns(t, m, "credhub-perf"); len(runs) != 1 {
		t.Errorf("an errand group of 3 runs %v; the director runs its first instance only", runs)
	}
	if !strings.Contains(fmt.Sprint(instanceGroup(t, m, "credhub-perf")["instances"]), "3") {
		t.Errorf("instances = %v", instanceGroup(t, m, "credhub-perf")["instances"])
	}
}
