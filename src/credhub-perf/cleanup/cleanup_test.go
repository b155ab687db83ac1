package cleanup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDefaultsAndScrub(t *testing.T) {
	pg := Database{Type: "postgresql", Host: "db", Password: "s3cret-pw"}
	my := Database{Type: "mariadb", Host: "db"}
	if pg.kind() != "postgres" || pg.port() != 5432 || my.kind() != "mysql" || my.port() != 3306 {
		t.Fatalf("kinds/ports: %s %d %s %d", pg.kind(), pg.port(), my.kind(), my.port())
	}
	err := pg.scrub(errors.New("connect failed: password=s3cret-pw rejected"))
	if strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "<redacted>") {
		t.Fatalf("scrub: %v", err)
	}
	if m := missingTables(map[string]bool{"credential": true, "encrypted_value": true}); strings.Join(m, ",") != "credential_version,encryption_key_canary,flyway_schema_history" {
		t.Fatalf("missing: %v", m)
	}
}

func TestUnknownTypeAndUnreachable(t *testing.T) {
	if _, err := (Database{Type: "oracle"}).Truncate(context.Background()); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Fatalf("want an error naming the type, got %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, typ := range []string{"postgres", "mysql"} {
		d := Database{Type: typ, Host: "127.0.0.1", Port: 1, User: "u", Password: "pw-never-shown", Name: "credhub"}
		_, err := d.Truncate(ctx)
		if err == nil || strings.Contains(err.Error(), "pw-never-shown") || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Fatalf("%s: %v", typ, err)
		}
	}
}

func TestReachesProtected(t *testing.T) {
	g := map[string][]string{"credential": {"credential_version"}, "credential_version": {"password_credential", "user_credential"}}
	if got := reachesProtected(g, "credential", "encrypted_value"); got != "" {
		t.Fatalf("CredHub's own graph reaches %q", got)
	}
	g["user_credential"] = []string{"permission"}
	if got := reachesProtected(g, "credential"); got != "permission" {
		t.Fatalf("got %q, want permission", got)
	}
}
