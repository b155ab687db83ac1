package releasetests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bireljob "github.com/cloudfoundry/bosh-cli/v7/release/job"
	boshjobman "github.com/cloudfoundry/bosh-cli/v7/release/job/manifest"
	birelres "github.com/cloudfoundry/bosh-cli/v7/release/resource"
	bitemplate "github.com/cloudfoundry/bosh-cli/v7/templatescompiler"
	bierbrenderer "github.com/cloudfoundry/bosh-cli/v7/templatescompiler/erbrenderer"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	biproperty "github.com/cloudfoundry/bosh-utils/property"
	boshsys "github.com/cloudfoundry/bosh-utils/system"
	boshuuid "github.com/cloudfoundry/bosh-utils/uuid"
	yamlv2 "gopkg.in/yaml.v2"
)

// instanceSpec is what the director would tell one instance about itself;
// bosh-cli's create-env context always says index 0, bootstrap true.
type instanceSpec struct {
	Index      int
	Bootstrap  bool
	Deployment string
	// Name is the instance group (a director's spec.name); create-env's
	// context has none.
	Name string
}

// loadJob reads jobs/NAME/spec the way bosh-cli reads an extracted job
// (release/job/archive_reader.go): templates, packages and property
// defaults built into biproperty values.
func loadJob(t testing.TB, name string) *bireljob.Job {
	t.Helper()
	return loadJobFrom(t, name, filepath.Join(repoRoot(t), "jobs", name), "spec")
}

// loadJobFrom reads a job from dir, whose spec is specFile ("spec" in the
// source tree, "job.MF" in a job archive of a built release).
func loadJobFrom(t testing.TB, name, dir, specFile string) *bireljob.Job {
	t.Helper()
	logger := boshlog.NewLogger(boshlog.LevelNone)
	fs := boshsys.NewOsFileSystem(logger)
	man, err := boshjobman.NewManifestFromPath(filepath.Join(dir, specFile), fs)
	if err != nil {
		t.Fatalf("reading job spec: %v", err)
	}
	job := bireljob.NewExtractedJob(birelres.NewResourceWithBuiltArchive(name, "fp", "", ""), dir, fs)
	job.Templates = man.Templates
	job.PackageNames = man.Packages
	job.Properties = map[string]bireljob.PropertyDefinition{}
	for pname, def := range man.Properties {
		d, err := biproperty.Build(def.Default)
		if err != nil {
			t.Fatalf("job %s property %s default: %v", name, pname, err)
		}
		job.Properties[pname] = bireljob.PropertyDefinition{Description: def.Description, Default: d}
	}
	return job
}

// specContext wraps bosh-cli's job evaluation context and overrides the
// instance fields the director sets per instance (index, bootstrap).
type specContext struct {
	inner bierbrenderer.TemplateEvaluationContext
	spec  instanceSpec
}

func (c specContext) MarshalJSON() ([]byte, error) {
	raw, err := c.inner.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]interface{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding evaluation context: %w", err)
	}
	m["index"] = c.spec.Index
	m["bootstrap"] = c.spec.Bootstrap
	if c.spec.Name != "" {
		m["name"] = c.spec.Name
	}
	return json.Marshal(m)
}

// buildProps parses instance-group job properties written as YAML the way
// bosh-cli parses a manifest (yaml.v2, interface-keyed maps).
func buildProps(t testing.TB, propsYAML string) biproperty.Map {
	t.Helper()
	raw := map[interface{}]interface{}{}
	if err := yamlv2.Unmarshal([]byte(propsYAML), &raw); err != nil {
		t.Fatalf("test properties are not YAML: %v", err)
	}
	built, err := biproperty.BuildMap(raw)
	if err != nil {
		t.Fatalf("building properties: %v", err)
	}
	return built
}

// renderJob renders every template of the job (and monit) with bosh-cli's
// ERB renderer, the system ruby and the given instance-group job
// properties, into a new directory laid out like /var/vcap/jobs/NAME.
func renderJob(t testing.TB, name string, propsYAML string, spec instanceSpec) (string, error) {
	t.Helper()
	return renderLoadedJob(t, loadJob(t, name), propsYAML, spec)
}

// renderLoadedJob is renderJob for a job read with loadJobFrom.
func renderLoadedJob(t testing.TB, job *bireljob.Job, propsYAML string, spec instanceSpec) (string, error) {
	t.Helper()
	return renderTemplates(t, job, propsYAML, spec, nil)
}

// renderTemplates renders the job's templates named in only (their paths
// under templates/), or all of them and monit when only is nil: one Ruby
// process each, for tests about one or two templates.
func renderTemplates(t testing.TB, job *bireljob.Job, propsYAML string, spec instanceSpec, only []string) (string, error) {
	t.Helper()
	logger := boshlog.NewLogger(boshlog.LevelNone)
	fs := boshsys.NewOsFileSystem(logger)
	built := buildProps(t, propsYAML)
	if spec.Deployment == "" {
		spec.Deployment = "credhub"
	}
	ctx := specContext{
		inner: bitemplate.NewJobEvaluationContext(*job, &built, biproperty.Map{}, biproperty.Map{}, spec.Deployment, "", boshuuid.NewGenerator(), logger),
		spec:  spec,
	}
	erb := bierbrenderer.NewERBRenderer(fs, boshsys.NewExecCmdRunner(logger), logger)
	out := t.TempDir()
	files := map[string]string{}
	if only == nil {
		files["monit"] = "monit"
	}
	for src, dst := range job.Templates {
		if only == nil || slices.Contains(only, src) {
			files[filepath.Join("templates", src)] = dst
		}
	}
	if len(files) != len(only) && only != nil {
		t.Fatalf("templates %v: the job has %d of them", only, len(files))
	}
	// The templates that refuse a job first: a refused job then costs one
	// or two Ruby processes, not up to all of them in map order.
	srcs := make([]string, 0, len(files))
	for src := range files {
		srcs = append(srcs, src)
	}
	slices.SortFunc(srcs, func(a, b string) int {
		va, vb := strings.Contains(a, "/validation_"), strings.Contains(b, "/validation_")
		if va != vb {
			if va {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, src := range srcs {
		dst := files[src]
		dstPath := filepath.Join(out, dst)
		if err := os.MkdirAll(filepath.Dir(dstPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := erb.Render(filepath.Join(job.ExtractedPath(), src), dstPath, ctx); err != nil {
			return "", fmt.Errorf("rendering %s: %w", src, err)
		}
	}
	return out, nil
}

// renderJobCreateEnv renders through bosh-cli's JobRenderer exactly as
// create-env does (index 0), for the default-path checks.
func renderJobCreateEnv(t testing.TB, name string, propsYAML string) (string, error) {
	t.Helper()
	logger := boshlog.NewLogger(boshlog.LevelNone)
	fs := boshsys.NewOsFileSystem(logger)
	job := loadJob(t, name)
	built := buildProps(t, propsYAML)
	erb := bierbrenderer.NewERBRenderer(fs, boshsys.NewExecCmdRunner(logger), logger)
	r := bitemplate.NewJobRenderer(erb, fs, boshuuid.NewGenerator(), logger)
	rendered, err := r.Render(*job, &built, biproperty.Map{}, biproperty.Map{}, "credhub", "")
	if err != nil {
		return "", err
	}
	t.Cleanup(rendered.DeleteSilently)
	return rendered.Path(), nil
}
