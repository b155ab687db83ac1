package api

import (
	"database/sql"
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

const msgMissingSignedBy = "You must specify a signing CA. Please update and retry your request."

// handleBulkRegenerate is POST /api/v1/bulk-regenerate {"signed_by": CA}:
// CredHub regenerates every certificate any of whose versions names CA as
// its ca_name, and, for each of those that is itself a CA, what it signs,
// depth first in case-insensitive name order; it answers the regenerated
// names, case-insensitively sorted and deduplicated. An unknown CA signs
// nothing: 200 with an empty list. CredHub runs it in one transaction, so
// a failure writes nothing; the sim checks permissions and that every
// certificate can be regenerated before it writes the first.
func (s *Server) handleBulkRegenerate(w http.ResponseWriter, r *http.Request, actor string) {
	// A @RequestBody bean: Jackson's unknown property is a 422.
	f, err := decodeBody(r, http.StatusUnprocessableEntity, "signed_by")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if isNull(f["signed_by"]) {
		s.fail(w, r, badRequest(msgMissingSignedBy))
		return
	}
	signer, err := jacksonString(f["signed_by"])
	if err != nil {
		s.fail(w, r, badRequest(msgBadRequest))
		return
	}
	signer = lookupName(signer)
	auditDetails(r, "BULK_REGENERATE", bulkDetails{SignedBy: signer})
	if err := s.checkBulkPermissions(r, actor, signer, map[string]bool{}); err != nil {
		s.fail(w, r, err)
		return
	}
	var plan []string
	if err := s.planBulk(r, signer, map[string]bool{}, &plan); err != nil {
		s.fail(w, r, err)
		return
	}
	for _, name := range plan {
		v, _, err := s.regenerateName(r, name, sql.NullString{})
		if err != nil {
			s.fail(w, r, err)
			return
		}
		auditAdd(r, v) // CredHub: one line per certificate regenerated
	}
	writeJSON(w, http.StatusOK, map[string][]string{"regenerated_credentials": foldSorted(plan)})
}

// signedBy lists what signer signs, in CredHub's case-insensitive order
// without case-insensitive duplicates.
func (s *Server) signedBy(r *http.Request, signer string) ([]string, error) {
	names, err := s.store.CertificatesSignedBy(r.Context(), signer)
	if err != nil {
		return nil, err
	}
	return foldSorted(names), nil
}

func foldSorted(names []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, n := range names {
		if k := strings.ToLower(n); !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out
}

// latestIsCA tells whether name's current version is a CA certificate,
// which is what decides whether CredHub goes on to what it signs.
func (s *Server) latestIsCA(r *http.Request, name string) (bool, error) {
	vs, err := s.store.Versions(r.Context(), name, 1)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if vs[0].Type != store.TypeCert {
		return false, nil
	}
	c, ok := parseCert(vs[0].Cert.Certificate.String)
	return ok && c.IsCA, nil
}

// checkBulkPermissions is CredHub's verifyRegeneratePermissions (ACLs
// on): read on the signer (else 404), write on everything it signs (else
// 403), recursively through the CAs among them. onPath stops a cycle of
// certificates naming each other as CA.
func (s *Server) checkBulkPermissions(r *http.Request, actor, signer string, onPath map[string]bool) error {
	if !s.cfg.ACLs || onPath[strings.ToLower(signer)] {
		return nil
	}
	onPath[strings.ToLower(signer)] = true
	defer delete(onPath, strings.ToLower(signer))
	if err := s.requirePermission(r, actor, signer, auth.OpRead); err != nil {
		return err
	}
	names, err := s.signedBy(r, signer)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := s.requirePermission(r, actor, n, auth.OpWrite); err != nil {
			return err
		}
		ca, err := s.latestIsCA(r, n)
		if err != nil {
			return err
		}
		if ca {
			if err := s.checkBulkPermissions(r, actor, n, onPath); err != nil {
				return err
			}
		}
	}
	return nil
}

// planBulk lists, in the order CredHub regenerates them, the certificates
// a bulk regenerate of signer writes, and checks that each can be
// regenerated (a parseable certificate) before anything is written.
func (s *Server) planBulk(r *http.Request, signer string, onPath map[string]bool, plan *[]string) error {
	key := strings.ToLower(signer)
	if onPath[key] {
		return nil
	}
	onPath[key] = true
	defer delete(onPath, key)
	names, err := s.signedBy(r, signer)
	if err != nil {
		return err
	}
	for _, n := range names {
		vs, err := s.store.Versions(r.Context(), n, 1)
		if err != nil {
			return err
		}
		if _, ok := parseCert(vs[0].Cert.Certificate.String); vs[0].Type != store.TypeCert || !ok {
			return badRequest(msgCannotRegenCertificate)
		}
		*plan = append(*plan, n)
		ca, err := s.latestIsCA(r, n)
		if err != nil {
			return err
		}
		if ca {
			if err := s.planBulk(r, n, onPath, plan); err != nil {
				return err
			}
		}
	}
	return nil
}
