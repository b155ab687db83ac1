// Package replay turns a workload.json (what `credhub-perf workload` read
// from CredHub's audit log) into what `credhub-perf run --workload` sends:
// the mix scenario's weights, the skew of the names its get and
// interpolate requests read, and the size of its set bodies.
//
// The weights are the shares of the replayable request types (those whose
// `scenario` is get, set or interpolate), summed per scenario, scaled so
// they add up to 1000000. A type the tool cannot send (find, generate,
// delete, permissions, ...) is not dropped in silence: it is listed with
// its share in meta.json and summary.json (`workload`) and in
// summary.txt, because the capacity measured is then the capacity of the
// replayable part of production only.
//
// Name popularity: production reads a few credentials far more often than
// the rest. popularity.zipf_s is the fitted Zipf exponent of the log's
// name counts; the run draws the seeded names with that skew
// ({{zipf N S}}, cred-0 the most popular), which matters for a target
// whose cost depends on caching or on index locality. 0 or absent is
// uniform. The seeded set stays seed.credentials names: the log's
// distinct names are counted, not kept.
//
// Set bodies: the set type's body_bytes.p50, where the log shows sizes,
// sizes the value a set request writes (as seed.bytes does otherwise,
// within its 64..60000); the broker-binding shape of that value keeps a
// body at least about 500 bytes.
//
// The file is outside input and read strictly: a bounded size, one JSON
// object, the format id, every number in range, shares that add up to 1
// (within 0.01, the rounding of 15 types' four decimals and more) and
// agree with the counts, at least one type to send. Each failure is one
// line naming the file, the problem and the fix, before any load. Fields
// the writer adds later are ignored (the contract lets it add fields,
// never rename them).
package replay
