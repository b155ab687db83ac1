package workload

import (
	"bytes"
	"hash/maphash"
)

// record is one parsed audit line. Its byte slices point into the line
// and live only until the next line is read.
type record struct {
	at     int64 // rt: ms since the epoch, when CredHub began the request
	typ    Type
	auth   authKind
	status int
	name   []byte // the credential the line is about (cs2, or the request's own name)
	key    uint64 // equal for every line of one request
	res    uint64 // the line's resource (cs2, cs3, cs5)
}

type authKind uint8

const (
	authMTLS authKind = iota
	authUAA
	authOther
	numAuth
)

// The skip reasons, as workload.json's "skipped" keys.
const (
	skipNotCEF      = "not CEF"
	skipNotCredHub  = "CEF from another product"
	skipMissing     = "CEF record without rt, request, requestMethod, cs4 or deviceAction"
	skipBadTime     = "rt not a time between 2000 and 2100"
	skipBadStatus   = "cs4 not an HTTP status"
	skipTooLong     = "line over 1 MiB"
	skipBackwards   = "time went back more than the reorder window within one file"
	skipEmptyFile   = "empty file"
	minRT           = 946684800000  // 2000-01-01
	maxRT           = 4102444800000 // 2100-01-01
	cefMarker       = "CEF:0|"
	nullValue       = "null"
	keyRT           = 0
	keySUID         = 2
	keyAuth         = 4
	keyRequest      = 5
	keyMethod       = 6
	keyVersion      = 8
	keyStatus       = 10
	keySrc          = 11
	keyName         = 14
	keyResourceUUID = 16
	keyAction       = 17
	keyDetails      = 19
)

// cefKeys are the extension keys in the order CredHub's CEFAuditRecord
// writes them. Values are not escaped, and src (X-Forwarded-For) or
// suser can hold spaces, so a value runs to the next expected key.
var cefKeys = [...]string{
	" rt=", " suser=", " suid=", " cs1Label=", " cs1=", " request=", " requestMethod=",
	" cs3Label=", " cs3=", " cs4Label=", " cs4=", " src=", " dst=", " cs2Label=", " cs2=",
	" cs5Label=", " cs5=", " deviceAction=", " cs6Label=", " cs6=",
}

var requiredKey = [len(cefKeys)]bool{keyRT: true, keyRequest: true, keyMethod: true, keyStatus: true, keyAction: true}

var hashSeed = maphash.MakeSeed()

// parseLine parses one line; a non-empty reason says why it is skipped.
func parseLine(line []byte, rec *record) (reason string) {
	i := bytes.Index(line, []byte(cefMarker))
	if i < 0 {
		return skipNotCEF
	}
	// A syslog drain puts its own header before "CEF:"; it is ignored.
	line = line[i+len(cefMarker):]
	var hdr [6][]byte
	for f := 0; f < 6; f++ {
		j := bytes.IndexByte(line, '|')
		if j < 0 {
			return skipNotCEF
		}
		hdr[f], line = line[:j], line[j+1:]
	}
	if string(hdr[0]) != "cloud_foundry" || string(hdr[1]) != "credhub" {
		return skipNotCredHub
	}
	var vals [len(cefKeys)][]byte
	if reason := splitExtension(line, &vals); reason != "" {
		return reason
	}
	return fillRecord(&vals, rec)
}

// splitExtension cuts the extension into the values of cefKeys. A key
// CredHub always writes but that is missing is looked for no further
// than the next one found, so a missing optional key costs nothing.
func splitExtension(ext []byte, vals *[len(cefKeys)][]byte) string {
	// Prefix a space so that every key, rt included, is " key=".
	if !bytes.HasPrefix(ext, []byte("rt=")) {
		return skipMissing
	}
	pos := 3
	cur := keyRT
	for k := keyRT + 1; k < len(cefKeys); k++ {
		j := bytes.Index(ext[pos:], []byte(cefKeys[k]))
		if j < 0 {
			if requiredKey[k] {
				return skipMissing
			}
			continue
		}
		vals[cur] = ext[pos : pos+j]
		pos += j + len(cefKeys[k])
		cur = k
	}
	vals[cur] = bytes.TrimRight(ext[pos:], " \r\n")
	return ""
}

func fillRecord(vals *[len(cefKeys)][]byte, rec *record) string {
	at, ok := atoi(vals[keyRT])
	if !ok || at < minRT || at >= maxRT {
		return skipBadTime
	}
	status, ok := atoi(vals[keyStatus])
	if !ok || status < 100 || status > 599 {
		return skipBadStatus
	}
	path, query, _ := bytes.Cut(vals[keyRequest], []byte("?"))
	rec.at = at
	rec.status = int(status)
	rec.typ = classify(vals[keyMethod], path, query, vals[keyAction])
	switch string(vals[keyAuth]) {
	case "mutual_tls", "mtls-auth", "mtls":
		rec.auth = authMTLS
	case "uaa", "oauth-access-token", "oauth":
		rec.auth = authUAA
	default:
		rec.auth = authOther
	}
	rec.name = resourceName(rec.typ, query, vals)
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for _, k := range [...]int{keyRT, keySUID, keyRequest, keyMethod, keyStatus, keySrc, keyAction, keyDetails} {
		h.Write(vals[k])
		h.WriteByte(0)
	}
	rec.key = h.Sum64()
	h.Reset()
	for _, k := range [...]int{keyName, keyVersion, keyResourceUUID} {
		h.Write(vals[k])
		h.WriteByte(0)
	}
	rec.res = h.Sum64()
	return ""
}

// resourceName is the credential a line names: cs2 where CredHub set
// it; for a get or delete by name (which log cs2=null when they fail)
// the query's name; for a failed set or generate the name in cs6.
func resourceName(t Type, query []byte, vals *[len(cefKeys)][]byte) []byte {
	switch t {
	case GetByName, Delete:
		if v := paramValue(query, "name"); len(v) > 0 {
			return v
		}
	case FindByPath, FindByNameLike, Info, Health:
		return nil
	}
	if n := vals[keyName]; len(n) > 0 && string(n) != nullValue {
		return n
	}
	d := vals[keyDetails]
	if i := bytes.Index(d, []byte(`"name":"`)); i >= 0 {
		d = d[i+len(`"name":"`):]
		if j := bytes.IndexByte(d, '"'); j >= 0 {
			return d[:j]
		}
	}
	return nil
}

// atoi parses a non-negative decimal of at most 18 digits.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
