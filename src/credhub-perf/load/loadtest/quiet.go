package loadtest

import (
	"os"
	"testing"
)

// QuietEnv names the environment variable that lets the tests measuring
// real time run: scripts/test-all sets it for its last suites, which run
// alone.
const QuietEnv = "CREDHUB_PERF_QUIET"

// QuietMachine skips t unless QuietEnv is 1. t measures throughput,
// latency or CPU in real time, which other work on the machine blurs (go
// test ./... runs other packages' tests alongside it), so elsewhere it
// would fail for the machine's reasons, not the code's.
func QuietMachine(t testing.TB) {
	t.Helper()
	if os.Getenv(QuietEnv) != "1" {
		t.Skipf("measures real time on a quiet machine: scripts/test-all runs it alone at the end; %s=1 runs it here", QuietEnv)
	}
}
