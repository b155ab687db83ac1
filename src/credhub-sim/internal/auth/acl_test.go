package auth

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"

	"github.com/credhub-perf/credhub-sim/internal/store"
)

func TestAllows(t *testing.T) {
	rows := []store.PermissionRow{
		{Path: "/team/*", Read: true},
		{Path: "/team/db", Write: true},
		{Path: "/ops/key", Delete: true, ReadACL: true, WriteACL: true},
	}
	for _, tc := range []struct {
		name string
		op   Operation
		want bool
	}{
		{"/team/db", OpRead, true},  // wildcard
		{"/team/db", OpWrite, true}, // exact row, additive with the wildcard
		{"/team/other", OpWrite, false},
		{"/teamx", OpRead, false}, // the wildcard covers "/team/" only
		{"/ops/key", OpDelete, true},
		{"/ops/key", OpReadACL, true},
		{"/ops/key", OpWriteACL, true},
		{"/ops/key", OpRead, false},
		{"/ops/key2", OpDelete, false}, // no wildcard, no prefix match
		{"/team/a/b", OpRead, true},    // a wildcard covers every depth
	} {
		if got := Allows(rows, tc.name, tc.op); got != tc.want {
			t.Errorf("Allows(%s, %s) = %v, want %v", tc.name, tc.op, got, tc.want)
		}
	}
}

// Only a "/*" ending is a wildcard, as in CredHub's lookup.
func TestCoversWildcardsOnlyAtSlashStar(t *testing.T) {
	for _, tc := range []struct {
		path, name string
		want       bool
	}{
		{"/*", "/anything/at/all", true},
		{"/a*", "/ab", false},
		{"/a*", "/a*", true},
		{"/a/*", "/a/*", true},
		{"/a/*", "/a", false},
		{"/a/*/c", "/a/b/c", false},
	} {
		if got := Covers(tc.path, tc.name); got != tc.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tc.path, tc.name, got, tc.want)
		}
	}
}

func TestParseOperations(t *testing.T) {
	p, err := ParseOperations([]string{"read", " write", "delete", "read_acl", "write_acl"})
	if err != nil || !(p.Read && p.Write && p.Delete && p.ReadACL && p.WriteACL) {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"", "READ", "admin"} {
		if _, err := ParseOperations([]string{bad}); err == nil {
			t.Errorf("operation %q accepted", bad)
		}
	}
}

func TestCertActor(t *testing.T) {
	const ou = "app:7f4a2c54-1b0e-4b8e-9d3f-2a6c1e5b9d70"
	for _, tc := range []struct {
		name  string
		eku   []x509.ExtKeyUsage
		ous   []string
		actor string
		err   string
	}{
		{"valid", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, []string{"other", ou}, "mtls-" + ou, ""},
		{"no client auth", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, []string{ou}, "", MsgMTLSNotClientAuth},
		{"v1 uuid", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, []string{"app:7f4a2c54-1b0e-1b8e-9d3f-2a6c1e5b9d70"}, "", MsgInvalidMTLSIdentity},
		{"upper case", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, []string{"app:7F4A2C54-1B0E-4B8E-9D3F-2A6C1E5B9D70"}, "", MsgInvalidMTLSIdentity},
		{"no OU", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, "", MsgInvalidMTLSIdentity},
	} {
		cert := &x509.Certificate{ExtKeyUsage: tc.eku, Subject: pkix.Name{OrganizationalUnit: tc.ous}}
		actor, err := CertActor(cert)
		if actor != tc.actor || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: %q %v, want %q %q", tc.name, actor, err, tc.actor, tc.err)
		}
	}
}
