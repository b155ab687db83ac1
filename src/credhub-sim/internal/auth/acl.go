package auth

import (
	"fmt"
	"strings"

	"github.com/credhub-perf/credhub-sim/internal/store"
)

// Operation is one of CredHub's permission operations.
type Operation string

// CredHub's five operations.
const (
	OpRead     Operation = "read"
	OpWrite    Operation = "write"
	OpDelete   Operation = "delete"
	OpReadACL  Operation = "read_acl"
	OpWriteACL Operation = "write_acl"
)

// ParseOperations checks a permission's operation list.
func ParseOperations(ops []string) (store.PermissionRow, error) {
	var p store.PermissionRow
	for _, op := range ops {
		switch Operation(strings.TrimSpace(op)) {
		case OpRead:
			p.Read = true
		case OpWrite:
			p.Write = true
		case OpDelete:
			p.Delete = true
		case OpReadACL:
			p.ReadACL = true
		case OpWriteACL:
			p.WriteACL = true
		default:
			return p, fmt.Errorf("operation %q is not one of read, write, delete, read_acl, write_acl", op)
		}
	}
	return p, nil
}

// Covers tells whether a permission path applies to a credential name, as
// CredHub's PermissionDataService.hasPermission looks rows up: the name
// itself, or "P/*" for every P/ that begins the name. So "/a/*" covers
// "/a/b" and "/a/b/c"; "/*" covers every name; "/a*" only "/a*".
func Covers(path, name string) bool {
	if path == name {
		return true
	}
	prefix, wild := strings.CutSuffix(path, "/*")
	return wild && strings.HasPrefix(name, prefix+"/")
}

// Allows applies CredHub's ACL rule to one actor's rows: some row covering
// name allows op. Permissions are additive.
func Allows(rows []store.PermissionRow, name string, op Operation) bool {
	for _, p := range rows {
		if Covers(p.Path, name) && p.Has(string(op)) {
			return true
		}
	}
	return false
}
