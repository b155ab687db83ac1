package api

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// FuzzRequestReaders feeds hostile bytes to the request readers (JSON
// objects, metadata, certificate parameters, alternative names, set values,
// permission, bulk-regenerate and certificate-version bodies; bearer tokens
// are fuzzed in package auth): an error is fine, a panic is not. The
// seeds run in every go test; go test -fuzz FuzzRequestReaders explores.
func FuzzRequestReaders(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, `[1]`, `{"a":`, `null`, `"x"`, `{"k":"` + string(make([]byte, 7000)) + `"}`,
		`{"common_name":"x","self_sign":true,"alternative_names":["a b!","*.","*","..","-a","1.2.3.4","::1",""]}`,
		`{"common_name":"x","is_ca":true,"key_usage":["bogus"],"duration":-1,"key_length":1}`,
		`{"certificate":"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n","private_key":"-----BEGIN PRIVATE KEY-----\nAA\n-----END PRIVATE KEY-----\n"}`,
		`{"ca":"x","ca_name":"y"}`, "\xff\xfe", `{"alternative_names":[1,2]}`,
		"a.b.c", "e30.e30.", "..", "eyJhbGciOiJub25lIn0.eyJleHAiOjF9.",
		`{"path":"/a/*","actor":"x","operations":["read","write_acl"]}`, `{"path":1,"actor":true,"operations":[null]}`,
		`{"operations":"read"}`, `{"path":"//","actor":"","operations":[]}`, `{"signed_by":["x"]}`,
		`{"version":"latest"}`, `{"version":1}`, `{"version":{}}`, `{"value":{},"transitional":"yes"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeObject(data) //nolint:errcheck // only panics matter
		req := httptest.NewRequest("POST", "/api/v2/permissions", bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		if p, err := decodePermissionRequest(req, "path", "actor", "operations"); err == nil {
			p.validate() //nolint:errcheck
		}
		// The certificate-version bodies: update_transitional_version and
		// POST .../versions.
		req = httptest.NewRequest("PUT", "/api/v1/certificates/x/update_transitional_version", bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		if fields, err := decodeBody(req, 422, "version"); err == nil {
			unmarshalString(fields["version"]) //nolint:errcheck
		}
		req = httptest.NewRequest("POST", "/api/v1/certificates/x/versions", bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		if fields, err := decodeBody(req, 422, "value", "transitional"); err == nil && !isNull(fields["transitional"]) {
			unmarshalBool(fields["transitional"]) //nolint:errcheck
		}
		jacksonString(data)   //nolint:errcheck
		metadataOf(data)      //nolint:errcheck
		parseCertParams(data) //nolint:errcheck
		validAlternativeName(string(data))
		parsePrivateKeyPEM(string(data)) //nolint:errcheck
		var names []string
		if json.Unmarshal(data, &names) == nil {
			for _, n := range names {
				validAlternativeName(n)
			}
		}
	})
}
