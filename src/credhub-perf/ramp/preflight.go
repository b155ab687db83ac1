package ramp

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/credhub-perf/credhub-perf/credhub"
)

// A run writes, reads and deletes under /credhub-perf/*. With CredHub's
// ACLs on, a client granted only read and write passes the authentication
// check, sends the whole ramp and then cannot delete what it wrote (CredHub
// answers a DELETE without permission with 404). One credential written,
// read back and deleted before any load names the missing permission while
// nothing has been sent.

// preflightDir is the path segment under /credhub-perf that holds the
// pre-flight credentials; no run id may take it.
const preflightDir = "preflight"

// preflight checks the three permissions in order with one credential of
// its own. Every failure is a SetupError naming the permission and the
// actor to grant it to.
func (r *runner) preflight(ctx context.Context) error {
	name := fmt.Sprintf("/credhub-perf/%s/tester-%d-%s", preflightDir, r.c.Tester.Index, randomSuffix())
	actor := r.actor()
	grant := fmt.Sprintf("grant %s read, write and delete on /credhub-perf/* (credhub.authorization.permissions), or turn ACLs off", actor)
	if err := r.api.SetJSON(ctx, name, []byte(`{"credhub-perf":"pre-flight"}`)); err != nil {
		if isDenied(err) {
			return &SetupError{fmt.Errorf("pre-flight: CredHub refused to write %s: %s lacks write permission; %s: %w", name, actor, grant, err)}
		}
		return &SetupError{fmt.Errorf("pre-flight: writing %s: %w", name, err)}
	}
	// Once written, the credential goes also when the read fails or the
	// run is interrupted: this is all a tester other than 0 writes before
	// the rendezvous, and nothing may stay behind.
	stays := fmt.Sprintf(" (the pre-flight credential stays: delete it with `credhub delete -n %s`)", name)
	drop := func() string {
		if derr := r.deletePreflight(ctx, name); derr != nil && !credhub.IsNotFound(derr) {
			return stays
		}
		return ""
	}
	if _, err := r.api.GetJSON(ctx, name); err != nil {
		// CredHub hides what a client may not read: 404 right after a
		// successful write means no read permission.
		if isDenied(err) || credhub.IsNotFound(err) {
			stays := drop()
			return &SetupError{fmt.Errorf("pre-flight: wrote %s but could not read it back: %s lacks read permission; %s%s: %w", name, actor, grant, stays, err)}
		}
		return &SetupError{fmt.Errorf("pre-flight: reading %s back%s: %w", name, drop(), err)}
	}
	if err := r.deletePreflight(ctx, name); err != nil {
		if isDenied(err) || credhub.IsNotFound(err) {
			return &SetupError{fmt.Errorf("pre-flight: wrote and read %s but could not delete it: %s lacks delete permission, which the cleanup needs; %s%s: %w", name, actor, grant, stays, err)}
		}
		return &SetupError{fmt.Errorf("pre-flight: deleting %s%s: %w", name, stays, err)}
	}
	return nil
}

// deletePreflight deletes the pre-flight credential, trying the whole
// (itself retried) call a few times: a target failing many requests must
// not keep it. Refusals (401, 403, 404) are final.
func (r *runner) deletePreflight(ctx context.Context, name string) error {
	var err error
	for try := 0; try < 3; try++ {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failurePublishTimeout)
		err = r.api.Delete(dctx, name)
		cancel()
		if err == nil || isDenied(err) || credhub.IsNotFound(err) {
			return err
		}
	}
	return err
}

func isDenied(err error) bool {
	var ae *credhub.APIError
	return errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403)
}

func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// actor is CredHub's name for this client, as ACL permissions name it:
// mtls-app:<uuid> from the certificate's OU app:<uuid>, or
// uaa-client:<client id>.
func (r *runner) actor() string {
	if r.token != nil {
		return "uaa-client:" + r.c.UAA.ClientID
	}
	b, err := os.ReadFile(r.c.Target.ClientCertFile)
	if err != nil {
		return "this client"
	}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return "this client"
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return "this client"
		}
		for _, ou := range cert.Subject.OrganizationalUnit {
			if id, ok := strings.CutPrefix(ou, "app:"); ok {
				return "mtls-app:" + id
			}
		}
		return "this client (its certificate has no OU app:<uuid>)"
	}
}
