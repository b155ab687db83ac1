package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// storeChurn runs workers goroutines against s, each doing ops operations
// (set, get, find, delete, permissions) on names of its own and on names every worker
// shares, and returns every error other than the documented ErrNotFound of
// a get or delete of a name that is not (or no longer) there. It is bounded
// in count, and in time by ctx.
func storeChurn(ctx context.Context, s *Store, workers, ops int) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	report := func(w, i int, op, name string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf("worker %d op %d: %s %s: %w", w, i, op, name, err))
		}
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ops {
				if ctx.Err() != nil {
					report(w, i, "stop", "", ctx.Err())
					return
				}
				name := fmt.Sprintf("/churn/own-%d/%d", w, i%5)
				if i%3 == 0 {
					name = fmt.Sprintf("/churn/shared/%d", i%4)
				}
				switch i % 5 {
				case 0, 1:
					nv := NewVersion{Name: name, Type: TypeValue, Secret: []byte(`"v"`)}
					if i%8 == 1 {
						nv = NewVersion{Name: name + "-pw", Type: TypePassword, Secret: []byte(`"p"`), Params: []byte(`{}`)}
					}
					if _, err := s.Write(ctx, nv); err != nil {
						report(w, i, "set", nv.Name, err)
					}
				case 2:
					if _, err := s.Versions(ctx, name, 0); err != nil && !errors.Is(err, ErrNotFound) {
						report(w, i, "get", name, err)
					}
					if _, err := s.LatestType(ctx, name); err != nil && !errors.Is(err, ErrNotFound) {
						report(w, i, "get type", name, err)
					}
					if _, err := s.FindByPath(ctx, "/churn/"); err != nil {
						report(w, i, "find", "/churn/", err)
					}
				case 3:
					if err := s.Delete(ctx, name); err != nil && !errors.Is(err, ErrNotFound) {
						report(w, i, "delete", name, err)
					}
				case 4:
					// Permissions: every worker races on the same rows.
					p := PermissionRow{Path: fmt.Sprintf("/churn/perm/%d", i%3), Actor: "mtls-app:churn", Read: true}
					p, err := s.CreatePermission(ctx, p)
					if errors.Is(err, ErrPermissionExists) {
						p, err = s.PermissionByPathActor(ctx, p.Path, p.Actor)
					}
					if err != nil && !errors.Is(err, ErrNotFound) {
						report(w, i, "create permission", p.Path, err)
						continue
					}
					p.Write = i%2 == 0
					if err := s.SetPermissionOperations(ctx, p); err != nil && !errors.Is(err, ErrNotFound) {
						report(w, i, "update permission", p.Path, err)
					}
					if err := s.DeletePermission(ctx, p.UUID); err != nil && !errors.Is(err, ErrNotFound) {
						report(w, i, "delete permission", p.Path, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

// TestConcurrentWritesNeverBusy: concurrent sets, gets and deletes of the
// same and different names on SQLite never fail with "database is locked"
// (SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT), as they never fail on PostgreSQL or
// MySQL in CredHub. Two stores on one file stand for two sim instances on
// one database, which the README promises to work.
func TestConcurrentWritesNeverBusy(t *testing.T) {
	workers, ops := 16, 120
	if testing.Short() {
		ops = 40
	}
	for _, tc := range []struct {
		name   string
		dsn    func(t *testing.T) string
		stores int
	}{
		{"file", func(t *testing.T) string { return "sqlite:" + t.TempDir() + "/churn.db" }, 1},
		{"memory", func(*testing.T) string { return "sqlite::memory:" }, 1},
		{"two-stores-one-file", func(t *testing.T) string { return "sqlite:" + t.TempDir() + "/churn.db" }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dsn := tc.dsn(t)
			var stores []*Store
			for range tc.stores {
				s, err := Open(ctx, dsn, "churn-password-0123456789")
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				stores = append(stores, s)
			}
			var wg sync.WaitGroup
			results := make([][]error, len(stores))
			for i, s := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = storeChurn(ctx, s, workers/len(stores), ops)
				}()
			}
			wg.Wait()
			for i, errs := range results {
				for _, err := range errs {
					t.Errorf("store %d: %v", i, err)
				}
			}
		})
	}
}

// TestCancelledQueriesLeaveNoLock: requests whose context ends while their
// SQL runs (a client that gives up, the end of a ramp step) must not break
// the requests that follow on the same pooled connection. Given such a
// context, modernc.org/sqlite v1.34.5 dropped, without finalizing it, the
// statement of a query whose context ended after its first step: the
// connection kept a read snapshot, and the next BEGIN IMMEDIATE on it failed
// at once with "database is locked (517)" (SQLITE_BUSY_SNAPSHOT) or "(5)"
// (SQLITE_BUSY, busy handler skipped inside a read transaction), as the CI
// run logged for DELETE /api/v1/data; on :memory: database/sql replaced the
// one connection with an empty database ("no such table"). Without the
// pool's detached contexts this test fails every run (4 of 4 here).
func TestCancelledQueriesLeaveNoLock(t *testing.T) {
	for _, tc := range []struct{ name, dsn string }{
		{"file", "sqlite:" + t.TempDir() + "/cancel.db"},
		{"memory", "sqlite::memory:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
			defer stop()
			s, err := Open(ctx, tc.dsn, "cancel-password-0123456789")
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const names = 40
			for i := range names {
				if _, err := s.Write(ctx, NewVersion{Name: fmt.Sprintf("/cancel/%d", i), Type: TypeValue, Secret: []byte(`"v"`)}); err != nil {
					t.Fatal(err)
				}
			}
			ops := 400
			if testing.Short() {
				ops = 100
			}
			var (
				mu   sync.Mutex
				errs []error
				wg   sync.WaitGroup
			)
			for w := range 12 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Workers 0-5 give up on their requests after 0-300 µs;
					// the others never do, and must never fail.
					rng := rand.New(rand.NewPCG(uint64(w), 1))
					abandons := w < 6
					for i := range ops {
						if ctx.Err() != nil {
							return
						}
						opCtx, cancel := ctx, context.CancelFunc(func() {})
						if abandons {
							opCtx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(300))*time.Microsecond)
						}
						name := fmt.Sprintf("/cancel/%d", rng.IntN(names))
						var err error
						switch i % 4 {
						case 0:
							_, err = s.Versions(opCtx, name, 0)
						case 1:
							_, err = s.Write(opCtx, NewVersion{Name: name, Type: TypeValue, Secret: []byte(`"v"`)})
						case 2:
							_, err = s.FindByPath(opCtx, "/cancel/")
						case 3:
							err = s.Delete(opCtx, name)
						}
						cancel()
						if err != nil && !abandons && !errors.Is(err, ErrNotFound) {
							mu.Lock()
							if len(errs) < 20 {
								errs = append(errs, fmt.Errorf("worker %d op %d on %s: %w", w, i, name, err))
							}
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			if ctx.Err() != nil {
				t.Errorf("not finished within the bound: %v", ctx.Err())
			}
			for _, err := range errs {
				t.Error(err)
			}
		})
	}
}
