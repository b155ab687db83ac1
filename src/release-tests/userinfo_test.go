package releasetests

import (
	"strings"
	"testing"
)

// A URL with user:password@ before its host would put the password in the
// rendered config, the errand's log and meta.json: the job refuses it at
// render time, and the refusal does not repeat the password.
func TestTemplatesRefuseUserinfoInURLs(t *testing.T) {
	const secret = "tmpl-url-s3cret"
	cases := []struct{ name, props, want string }{
		{"credhub.url", strings.Replace(minimalProps(""), "url: https://credhub.service.cf.internal:8844", "url: https://admin:"+secret+"@credhub.service.cf.internal:8844", 1),
			"credhub.url: holds a user name or password (user:password@ before the host)"},
		{"credhub.url without a scheme", strings.Replace(minimalProps(""), "url: https://credhub.service.cf.internal:8844", "url: admin:"+secret+"@credhub:8844", 1),
			"credhub.url: holds a user name or password"},
		{"credhub.uaa.url", minimalProps("  uaa: {url: \"https://u:" + secret + "@uaa.internal:8443\", client_id: c, client_secret: s}\n"),
			"credhub.uaa.url: holds a user name or password"},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := renderJob(t, "credhub-perf", c.props, instanceSpec{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want a render error saying %q, got %v", c.want, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the refusal repeats the password: %v", err)
			}
		})
	}
}
