package load

import (
	"os"
	"runtime"
	"runtime/debug"
)

// A full TLS handshake allocates about 50 KB inside crypto/tls, and a
// net/http request about 5.5 KB in 72 objects, while a generator's live heap
// is a few MB and does not grow with the run (results stream through
// bounded buffers). Go's default (collect when the heap reaches
// twice the live heap, at least 4 MB) then collects about every 60
// handshakes: measured with keep-alive off and mTLS, 17 collections a
// second at 1,000 handshakes/s, some 3% of the generator's CPU. At 400 the
// heap goal is 16 MB and there are 3.6 a second, for about 10 MB more RSS
// (26 MB peak over 10,000,000 keep-alive requests).
const handshakeGCPercent = 400

// smallHeap bounds the heap in use after setup (templates, {{pick}} files)
// under which the higher GC percent applies: at 400 the heap goal stays
// under 5x this. A larger heap keeps Go's default so memory is not
// multiplied.
const smallHeap = 8 << 20

// TuneGC raises the GC percent after a generator's setup (hey's, and
// credhub-perf's before its first scenario) unless the user chose GOGC.
// Each collection also stalls a one-core tester for a few milliseconds
// (the mark phase keeps its P busy; measured with net/http at 5,000 req/s:
// about 30 requests delayed 2-4 ms per collection), so fewer collections
// are fewer late responses as well as less CPU.
func TuneGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	// HeapAlloc counts setup garbage too, so it errs towards the default.
	if ms.HeapAlloc < smallHeap {
		debug.SetGCPercent(handshakeGCPercent)
	}
}
