package releasetests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The rehearsal's credhub-sim enforces ACLs, as cf-deployment's CredHub
// does, with the permissions our ops files give a CredHub deployment: the
// tester's certificate carries the OU app:<tester_app_guid> of
// vars.example.yml, and only the grant add-to-credhub-deployment.yml adds
// lets it run. The harness (canary, leftovers, checks) has its own client,
// granted /* like cf-deployment's credhub_admin_client.

// rehearsalAdminGUID names the harness's client (mtls-app:<this>).
const rehearsalAdminGUID = "0a0d0e0f-1111-4222-8333-944445555666"

// simCertFlags are the extra `credhub-sim certs` flags: the tester's OU.
func simCertFlags() []string {
	return []string{"--client-ou", "app:" + exampleTesterGUID}
}

// simExtraClients writes the harness's client (admin.crt, admin.key) and a
// client with no grant (stranger.crt, stranger.key) next to the tester's.
func simExtraClients(t *testing.T, bin, certs string) {
	t.Helper()
	for name, ou := range map[string]string{"admin": "app:" + rehearsalAdminGUID, "stranger": "app:7e7e7e7e-8f8f-4a9a-8b0b-1c1c1c1c1c1c"} {
		out, err := exec.Command(bin, "certs", "--out", certs, "--client-only", "--client-name", name, "--client-ou", ou).CombinedOutput()
		if err != nil {
			t.Fatalf("credhub-sim certs --client-name %s: %v\n%s", name, err, out)
		}
	}
}

// simACLFlags turns ACLs on and seeds the permissions of cf-deployment's
// CredHub after our ops files (bosh int of the real-shaped manifest), plus
// the harness's grant.
func simACLFlags(t *testing.T) []string {
	t.Helper()
	m := boshInt(t, fixture(t, "cf-deployment-shape.yml"), []string{"add-to-credhub-deployment.yml", "cf-deployment.yml"})
	acls, perms := credhubAuthorization(t, m)
	if !acls {
		t.Fatal("the cf-deployment shape has ACLs off")
	}
	flags := []string{"-acls",
		"-permission", "/* mtls-app:" + rehearsalAdminGUID + " read,write,delete,read_acl,write_acl"}
	tester := false
	for _, p := range perms {
		flags = append(flags, "-permission", p.Path+" "+strings.Join(p.Actors, ",")+" "+strings.Join(p.Operations, ","))
		for _, a := range p.Actors {
			tester = tester || a == "mtls-app:"+exampleTesterGUID
		}
	}
	if !tester {
		t.Fatalf("the ops files grant the tester nothing: %+v", perms)
	}
	return flags
}

// simHarnessCert is the harness's client certificate and key.
func simHarnessCert(certs string) (string, string) {
	return filepath.Join(certs, "admin.crt"), filepath.Join(certs, "admin.key")
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
