// Package workload reads CredHub's CEF audit log
// (/var/vcap/sys/log/credhub/credhub_security_events.log*) and sums up the
// workload it records: requests by type (mapped to credhub-perf's
// scenarios), by auth mechanism and status, arrival rates (peak second,
// busiest minute, p99 of per-second counts, burstiness), and how requests
// spread over credential names. `credhub-perf workload` writes the result
// as workload.json and the per-second arrivals as workload-arrivals.csv.
//
// # What CredHub writes (2.15, from its source)
//
// CEFAuditRecord is a request-scoped bean. AuditInterceptor.preHandle
// fills in the request (method, URI and query, X-Forwarded-For or the
// peer address); rt is the bean's creation, so it is when the request
// began, in ms. afterCompletion returns without logging when the request
// has no authenticated principal, so /info, /health and every request
// refused for authentication (401) write nothing. Otherwise it adds the
// actor (suid), the auth mechanism (cs1: mutual_tls or uaa) and the status
// (cs4) and logs the record once, through the CEFAudit logger whose
// layout in credhub-release is "%m%n": lines start with "CEF:0|".
//
// One log event can be several lines. The record holds a resource list;
// toString writes one line per resource (joined by the line separator,
// so they are adjacent), each with its own cs2 (resource name), cs5
// (resource UUID) and cs3 (version UUID), every other field the same;
// with an empty list it writes one line. The handlers that add resources:
//   - GET /api/v1/data?name=N: one line per version returned (all
//     versions by default, the newest K with versions=K, the active and
//     transitional ones with current=true); a 404 writes one line.
//   - POST /api/v1/interpolate: one line per credhub-ref resolved.
//   - GET /api/v1/certificates and the regenerate endpoints (bulk
//     regenerate, a CA's regenerate with its children): one per
//     certificate.
//
// Set, generate, delete, get by id and find write one line (set and
// generate name the credential in cs2 once it is written; find has
// cs2=null and its path or name-like in cs6). deviceAction is the
// operation of cs6's request details (GET, SET, GENERATE, REGENERATE,
// FIND, DELETE, INTERPOLATE, ...), "null" when the request failed
// before its controller set them.
//
// # Counting requests, not lines
//
// Lines are grouped into requests per file: a line continues the request
// before it when every field but cs2, cs3 and cs5 is equal (rt, request,
// suid, src, status, deviceAction, cs6: compared by hash) and its
// resource is not one the request already has. A repeated resource is a
// second request: two identical finds in one millisecond stay two. An
// interpolate naming one credential twice reads as two requests (CredHub
// logs both lines the same); a syslog drain that interleaves instances'
// lines splits their multi-line requests. Both are rare; the per-type
// "lines" field shows how many lines each type wrote.
//
// # Reading
//
// Inputs are plain files, gzipped ones (by magic number, any name;
// multi-member streams too), and tarballs (`bosh logs`: every
// credhub_security_events.log* inside, also in tarballs one or two levels
// down, copied to a private temporary directory that is removed after).
// Every file is a source. A file is ordered by when requests ended, not
// by rt, so each source keeps a reorder window (60 s of rt) and releases
// a request once a line 60 s later has been read; the sources are then
// merged by time (k-way), so instances' files and rotated files may come
// in any order and clocks of different instances need not agree. A
// request more than the window behind what its file already released (a
// clock stepped back) is skipped and counted.
//
// Bad input is a counted skip by reason (workload.json "skipped"): a
// non-CEF line (binary junk included), CEF from another product, a
// record without rt, request, requestMethod, cs4 or deviceAction, an rt
// outside 2000-2100, a status that is not one, a line over 1 MiB
// (skipped whole, without holding it), an empty file. A truncated or
// corrupt gzip stream or tarball is an error naming the file and the
// line reached; so is no record at all.
//
// # Figures
//
// Per-second counts include the empty seconds between the first and the
// last request. p99_second is the nearest-rank 99th percentile of them,
// from an exact histogram of counts (memory: one entry per distinct
// count). burstiness is their variance / mean (1 for Poisson arrivals).
// The busiest minute is a sliding 60 s window. Names are normalised as
// CredHub looks them up (unescaped, leading slash, lower case) and
// counted exactly by 64-bit hash up to 2,000,000 distinct names (past
// that, names.distinct is a lower bound and distinct_exact false); the
// names themselves are kept only with --keep-names. A request counts
// once per distinct name it touched: the name of a get or delete (from
// its query), the credentials an interpolate resolved, the name a set or
// generate wrote. zipf_s is a least-squares fit of log count on log rank
// over the top 10,000 names.
//
// workload-arrivals.csv has the columns time (RFC 3339, the second),
// unix_s, requests, then one per type id in TypeIDs order; one row per
// second with at least one request (a missing second had none).
package workload
