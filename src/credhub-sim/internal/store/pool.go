package store

import (
	"context"
	"database/sql"
)

// pool is the Store's *sql.DB. On SQLite it hands the driver contexts that
// never end: modernc.org/sqlite (v1.34.5) mishandles a context that ends
// while its SQL runs. When a request's context ended just after a query's
// first step (a client timeout, the end of a ramp step, a stopped tester),
// the driver returned the context's error and dropped the statement without
// finalizing it. That pooled connection then held a read snapshot for good,
// and every later BEGIN IMMEDIATE on it failed at once with "database is
// locked (517)" (SQLITE_BUSY_SNAPSHOT: a snapshot cannot become a write
// transaction once another connection has committed) or "(5)" (SQLITE_BUSY
// with the busy handler skipped, as it is inside a read transaction): the
// DELETE 500s of CI's errand rehearsal. The driver also interrupts the
// connection from a goroutine, which can hit the next statement on it.
//
// Detached, an abandoned request finishes its SQL (milliseconds), as a
// CredHub request does on JDBC when its client goes away, and the driver
// starts no watcher goroutine per query. Newer drivers (v1.57.0) finalize
// the statement, but measured about twice the CPU per get here (see
// docs/benchmarks.md). PostgreSQL and MySQL keep their contexts.
type pool struct {
	*sql.DB
	detach bool
}

func (p pool) ctx(ctx context.Context) context.Context {
	if p.detach {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (p pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.DB.QueryContext(p.ctx(ctx), query, args...)
}

func (p pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.DB.QueryRowContext(p.ctx(ctx), query, args...)
}

func (p pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.DB.ExecContext(p.ctx(ctx), query, args...)
}

// PingContext keeps its caller's bound (/health gives 3 s) while the
// driver's ping, a "select 1", runs detached and finishes on its own.
func (p pool) PingContext(ctx context.Context) error {
	if !p.detach {
		return p.DB.PingContext(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- p.DB.PingContext(p.ctx(ctx)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BeginTx starts a transaction whose statements are detached like the
// pool's. A detached transaction is not rolled back by database/sql when
// the request ends; every caller commits or rolls back itself.
func (p pool) BeginTx(ctx context.Context, opts *sql.TxOptions) (txn, error) {
	tx, err := p.DB.BeginTx(p.ctx(ctx), opts)
	return txn{Tx: tx, p: p}, err
}

// txn is a transaction of a pool.
type txn struct {
	*sql.Tx
	p pool
}

func (t txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(t.p.ctx(ctx), query, args...)
}

func (t txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.Tx.QueryRowContext(t.p.ctx(ctx), query, args...)
}

func (t txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(t.p.ctx(ctx), query, args...)
}
