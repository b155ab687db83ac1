package releasetests

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bitemplate "github.com/cloudfoundry/bosh-cli/v7/templatescompiler"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	biproperty "github.com/cloudfoundry/bosh-utils/property"
	boshuuid "github.com/cloudfoundry/bosh-utils/uuid"
)

// bosh-cli's renderer has no links (its if_link is always false), so the
// link branch of the templates is rendered with bosh-cli's own Ruby script
// plus link/if_link modelled on the director's bosh-template
// EvaluationContext: link(name).instances (index, address, ...),
// link.address, link.p / link.if_p over the provider's link properties.
const linkShim = `
class TemplateEvaluationContext
  class ShimLinkInstance
    attr_reader :name, :index, :id, :az, :address, :bootstrap
    def initialize(h)
      @name, @index, @id, @az, @address, @bootstrap =
        h['name'], h['index'], h['id'], h['az'], h['address'], h['bootstrap']
    end
  end

  class ShimLink
    attr_reader :instances, :address
    def initialize(h)
      @instances = (h['instances'] || []).map { |i| ShimLinkInstance.new(i) }
      @properties = h['properties'] || {}
      @address = h['address']
    end

    def p(*args)
      names = Array(args[0])
      names.each do |name|
        ref = @properties
        name.split('.').each { |k| ref = ref.is_a?(Hash) ? ref[k] : nil }
        return ref unless ref.nil?
      end
      return args[1] if args.length == 2
      raise UnknownProperty.new(names)
    end

    def if_p(*names)
      values = names.map do |name|
        value = p(name, nil)
        return ActiveElseBlock.new(self) if value.nil?
        value
      end
      yield(*values)
      InactiveElseBlock.new
    end
  end

  alias_method :shim_original_initialize, :initialize
  def initialize(spec)
    @shim_links = spec['links'] || {}
    shim_original_initialize(spec)
  end

  def link(name)
    raise "Can't find link '#{name}'" unless @shim_links.key?(name)
    ShimLink.new(@shim_links[name])
  end

  def if_link(name)
    return ActiveElseBlock.new(self) unless @shim_links.key?(name)
    yield ShimLink.new(@shim_links[name])
    InactiveElseBlock.new
  end
end

`

// boshRendererScript returns the Ruby renderer embedded in bosh-cli
// (templatescompiler/erbrenderer's templateEvaluationContextRb), read from
// the module source so the shim patches the exact script create-env runs.
func boshRendererScript(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/cloudfoundry/bosh-cli/v7").Output()
	if err != nil {
		t.Fatalf("locating bosh-cli module source: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "templatescompiler", "erbrenderer", "template_evaluation_context_rb.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	var script string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "templateEvaluationContextRb" {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
			script, err = strconv.Unquote(lit.Value)
		}
		return false
	})
	if err != nil || script == "" {
		t.Fatalf("templateEvaluationContextRb not found in %s (%v)", path, err)
	}
	return script
}

// renderWithLinks renders one template of the job with the given
// properties, instance spec and links (name -> {address, instances,
// properties}) through bosh-cli's Ruby script plus the link shim.
func renderWithLinks(t testing.TB, jobName, template, propsYAML string, spec instanceSpec, links map[string]interface{}) (string, error) {
	t.Helper()
	script := boshRendererScript(t)
	const mainGuard = "if $0 == __FILE__"
	if !strings.Contains(script, mainGuard) {
		t.Fatalf("bosh-cli renderer script changed: no %q", mainGuard)
	}
	script = strings.Replace(script, mainGuard, linkShim+mainGuard, 1)

	logger := boshlog.NewLogger(boshlog.LevelNone)
	job := loadJob(t, jobName)
	built := buildProps(t, propsYAML)
	if spec.Deployment == "" {
		spec.Deployment = "credhub"
	}
	inner := bitemplate.NewJobEvaluationContext(*job, &built, biproperty.Map{}, biproperty.Map{}, spec.Deployment, "", boshuuid.NewGenerator(), logger)
	raw, err := specContext{inner: inner, spec: spec}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var ctx map[string]interface{}
	if err := json.Unmarshal(raw, &ctx); err != nil {
		t.Fatal(err)
	}
	ctx["links"] = links
	ctxJSON, err := json.Marshal(ctx)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "erb-render.rb")
	ctxPath := filepath.Join(dir, "erb-context.json")
	dst := filepath.Join(dir, "out")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ctxPath, ctxJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(job.ExtractedPath(), "templates", template)
	cmd := exec.Command("ruby", scriptPath, ctxPath, src, dst)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("rendering %s with links: %w: %s", template, err, out)
	}
	b, err := os.ReadFile(dst)
	return string(b), err
}
