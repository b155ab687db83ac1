package credhub

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeStore is a CredHub that lists and deletes names, failing the deletes
// fail says should fail (with a 400, which the client does not retry, so
// the test needs no backoff).
func fakeStore(t *testing.T, names []string, fail func(name string, attempt int) bool) (*Client, func() []string) {
	var mu sync.Mutex
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	attempts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			var out struct {
				Credentials []map[string]string `json:"credentials"`
			}
			out.Credentials = []map[string]string{}
			for n := range have {
				if strings.HasPrefix(n, r.URL.Query().Get("path")+"/") {
					out.Credentials = append(out.Credentials, map[string]string{"name": n})
				}
			}
			_ = json.NewEncoder(w).Encode(out)
		case http.MethodDelete:
			n := r.URL.Query().Get("name")
			attempts[n]++
			if !have[n] {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"error":"does not exist"}`))
				return
			}
			if fail(n, attempts[n]) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error":"injected failure"}`))
				return
			}
			delete(have, n)
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		var left []string
		for n := range have {
			left = append(left, n)
		}
		return left
	}
}

func runNames(k int) (Names, []string) {
	n := Names{RunID: "r1/get"}
	var names []string
	for i := 0; i < k; i++ {
		names = append(names, n.Seed(i))
	}
	return n, names
}

// A target failing about half the deletes: every name is tried, and the
// failed ones again in the next round, until none is left. Stopping at
// the first failed delete would leave the rest behind.
func TestDeleteAllOutlastsFailingDeletes(t *testing.T) {
	n, names := runNames(40)
	c, left := fakeStore(t, names, func(name string, attempt int) bool {
		// half the names fail their first two attempts
		last := name[len(name)-1]
		return (last-'0')%2 == 0 && attempt <= 2
	})
	k, err := DeleteAll(context.Background(), c, n, 8)
	if err != nil || k != 40 || len(left()) != 0 {
		t.Fatalf("deleted %d, err %v, left %v", k, err, left())
	}
}

// A credential that cannot be deleted at all ends the cleanup with an
// error counting what stays, after the others are gone.
func TestDeleteAllReportsWhatStays(t *testing.T) {
	n, names := runNames(20)
	stuck := n.Seed(7)
	c, left := fakeStore(t, names, func(name string, _ int) bool { return name == stuck })
	k, err := DeleteAll(context.Background(), c, n, 4)
	if err == nil || k != 19 || len(left()) != 1 || !strings.Contains(err.Error(), "1 credentials under "+n.Prefix()+" could not be deleted") ||
		!strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("deleted %d, err %v, left %v", k, err, left())
	}
}
