package workload

import "bytes"

// Type is a request type: what an operator would call one kind of request.
type Type uint8

// The request types, in workload.json's order of ids.
const (
	GetByName Type = iota
	GetByID
	FindByPath
	FindByNameLike
	Set
	Generate
	Regenerate
	Delete
	Interpolate
	PermissionsRead
	PermissionsWrite
	Info
	Health
	Certificates
	Other
	numTypes
)

var typeIDs = [numTypes]string{
	"get_by_name", "get_by_id", "find_by_path", "find_by_name_like", "set", "generate",
	"regenerate", "delete", "interpolate", "permissions_read", "permissions_write", "info",
	"health", "certificates", "other",
}

// typeEndpoint is the method and path workload.json names for a type
// (the query that tells get, find by path and find by name-like apart is
// in the type id).
var typeEndpoint = [numTypes][2]string{
	{"GET", "/api/v1/data"}, {"GET", "/api/v1/data/{id}"}, {"GET", "/api/v1/data"},
	{"GET", "/api/v1/data"}, {"PUT", "/api/v1/data"}, {"POST", "/api/v1/data"},
	{"POST", "/api/v1/regenerate"}, {"DELETE", "/api/v1/data"}, {"POST", "/api/v1/interpolate"},
	{"GET", "/api/v2/permissions"}, {"POST", "/api/v2/permissions"}, {"GET", "/info"},
	{"GET", "/health"}, {"GET", "/api/v1/certificates"}, {"", ""},
}

// typeScenario is the credhub-perf scenario a type replays as ("" = none).
var typeScenario = [numTypes]string{GetByName: "get", Set: "set", Interpolate: "interpolate"}

// String is the type's stable id.
func (t Type) String() string {
	if t >= numTypes {
		return "other"
	}
	return typeIDs[t]
}

// TypeIDs lists every type id in order (the arrivals CSV's columns).
func TypeIDs() []string { return typeIDs[:] }

// classify names a request's type from its method, path, query and
// CredHub's deviceAction. The path decides where it can: deviceAction
// is null on a request that failed before its controller set the
// request details (a 400 on a bad body, say).
func classify(method, path, query, action []byte) Type {
	switch {
	case bytes.Equal(path, []byte("/api/v1/data")) || bytes.Equal(path, []byte("/api/v1/data/")):
		return classifyData(method, query, action)
	case bytes.HasPrefix(path, []byte("/api/v1/data/")):
		return GetByID
	case bytes.HasPrefix(path, []byte("/api/v1/interpolate")):
		return Interpolate
	case bytes.HasPrefix(path, []byte("/api/v1/regenerate")), bytes.HasPrefix(path, []byte("/api/v1/bulk-regenerate")):
		return Regenerate
	case bytes.HasPrefix(path, []byte("/api/v1/permissions")), bytes.HasPrefix(path, []byte("/api/v2/permissions")):
		if string(method) == "GET" {
			return PermissionsRead
		}
		return PermissionsWrite
	case bytes.HasPrefix(path, []byte("/api/v1/certificates")):
		return Certificates
	case bytes.Equal(path, []byte("/info")), bytes.Equal(path, []byte("/version")):
		return Info
	case bytes.HasPrefix(path, []byte("/health")):
		return Health
	}
	return Other
}

func classifyData(method, query, action []byte) Type {
	switch string(method) {
	case "GET":
		switch {
		case hasParam(query, "path"):
			return FindByPath
		case hasParam(query, "name-like"):
			return FindByNameLike
		}
		return GetByName
	case "PUT":
		return Set
	case "POST":
		if string(action) == "REGENERATE" {
			return Regenerate
		}
		return Generate
	case "DELETE":
		return Delete
	}
	return Other
}

// hasParam tells whether the raw query string has parameter key.
func hasParam(query []byte, key string) bool {
	return paramValue(query, key) != nil
}

// paramValue is the raw (still escaped) value of key in query, nil when
// absent, empty (not nil) when present without a value.
func paramValue(query []byte, key string) []byte {
	for len(query) > 0 {
		var part []byte
		if i := bytes.IndexByte(query, '&'); i >= 0 {
			part, query = query[:i], query[i+1:]
		} else {
			part, query = query, nil
		}
		k, v, _ := bytes.Cut(part, []byte("="))
		if string(k) == key {
			if v == nil {
				v = []byte{}
			}
			return v
		}
	}
	return nil
}
