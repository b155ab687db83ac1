package credhub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Names derives every credential name of a run from its run id, so that
// several testers agree on them without talking, and cleanup can find them
// all under one path.
type Names struct {
	RunID string
}

// Prefix is the path every credential of the run lives under.
func (n Names) Prefix() string { return "/credhub-perf/" + n.RunID }

// Seed is the name of seeded credential i.
func (n Names) Seed(i int) string { return fmt.Sprintf("%s/seed/cred-%d", n.Prefix(), i) }

// SeedTemplate is a seeded name with the index drawn at random per request
// by the engine: uniformly ({{rand N}} yields 0..N-1) when zipfS is 0,
// else with a production log's skew ({{zipf N S}}: cred-0 the most
// popular).
func (n Names) SeedTemplate(count int, zipfS float64) string {
	if zipfS > 0 {
		return fmt.Sprintf("%s/seed/cred-{{zipf %d %s}}", n.Prefix(), count, strconv.FormatFloat(zipfS, 'g', -1, 64))
	}
	return fmt.Sprintf("%s/seed/cred-{{rand %d}}", n.Prefix(), count)
}

// SetPrefix is the path under which tester t's set requests write.
func (n Names) SetPrefix(tester int) string { return fmt.Sprintf("%s/set/t%d-", n.Prefix(), tester) }

// Control is the name through which tester 0 tells the others to stop.
func (n Names) Control() string { return n.Prefix() + "/control/stop" }

func randHex(nbytes int) string {
	b := make([]byte, nbytes)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// brokerCredentials is shaped like what a service broker hands an app
// (a MySQL/PostgreSQL binding), padded with a CA-like blob to size bytes.
func brokerCredentials(i int, size int, password string) map[string]any {
	host := fmt.Sprintf("10.%d.%d.%d", 10+i/65536%200, i/256%256, i%256)
	user := "u" + randHex(8)
	name := "service_instance_db_" + randHex(8)
	m := map[string]any{
		"hostname": host,
		"port":     3306,
		"name":     name,
		"username": user,
		"password": password,
		"uri":      fmt.Sprintf("mysql://%s:%s@%s:3306/%s?reconnect=true", user, password, host, name),
		"jdbcUrl":  fmt.Sprintf("jdbc:mysql://%s:3306/%s?user=%s&password=%s", host, name, user, password),
	}
	b, _ := json.Marshal(m)
	if pad := size - len(b) - len(`,"ca_certificate":""`); pad > 0 {
		m["ca_certificate"] = pemLike(pad)
	}
	return m
}

// pemLike returns about n bytes (once JSON-encoded) that look like a PEM
// certificate.
func pemLike(n int) string {
	const head, tail = "-----BEGIN CERTIFICATE-----\n", "\n-----END CERTIFICATE-----"
	const overhead = len(head) + len(tail) + 2 // each \n is two bytes in JSON
	if n <= overhead+2 {
		return strings.Repeat("A", n)
	}
	return head + randHex((n - overhead + 1) / 2)[:n-overhead] + tail
}

// SeedValue is the JSON value of seeded credential i.
func SeedValue(i, size int) json.RawMessage {
	b, _ := json.Marshal(brokerCredentials(i, size, randHex(16)))
	return b
}

// SetBodyTemplate is the body of a set request: a new version of one of
// the tester's pool of `names` names ({{cycle N}}: the engine's requests
// name them in turn) with a unique password per request ({{uuid}}). A
// bounded pool keeps what a run leaves behind, and its API cleanup, at
// most `names` credentials per tester whatever the load; a unique name per
// request left one credential per request (a heavy set ramp: a cleanup of
// hundreds of thousands of deletes).
func SetBodyTemplate(n Names, tester, size, names int) string {
	if names < 1 {
		names = 1
	}
	m := brokerCredentials(0, size-40, "PASSWORD")
	v, _ := json.Marshal(m)
	value := strings.Replace(string(v), `"PASSWORD"`, `"{{uuid}}"`, 1)
	value = strings.ReplaceAll(value, ":PASSWORD@", ":{{uuid}}@")
	value = strings.ReplaceAll(value, "password=PASSWORD", "password={{uuid}}")
	name, _ := json.Marshal(n.SetPrefix(tester))
	return fmt.Sprintf(`{"name":%s,"type":"json","value":%s}`, strings.TrimSuffix(string(name), `"`)+fmt.Sprintf(`{{cycle %d}}"`, names), value)
}

// InterpolateBodyTemplate is a VCAP_SERVICES body with three bindings whose
// credhub-refs point at random seeded credentials (drawn as SeedTemplate
// draws), like an app with a database, a config server and a service
// registry.
func InterpolateBodyTemplate(n Names, count int, zipfS float64) string {
	ref := n.SeedTemplate(count, zipfS)
	binding := func(label, name, plan string, tags string) string {
		return fmt.Sprintf(`[{"binding_name":null,"credentials":{"credhub-ref":"((%s))"},"instance_name":"%s","label":"%s","name":"%s","plan":"%s","provider":null,"syslog_drain_url":null,"tags":[%s],"volume_mounts":[]}]`,
			ref, name, label, name, plan, tags)
	}
	return fmt.Sprintf(`{"p.mysql":%s,"p.config-server":%s,"p.service-registry":%s}`,
		binding("p.mysql", "orders-db", "db-small", `"mysql"`),
		binding("p.config-server", "config-server", "standard", `"configuration","spring-cloud"`),
		binding("p.service-registry", "service-registry", "standard", `"eureka","discovery","spring-cloud"`))
}

// SeedAll writes credentials 0..count-1 with a few parallel writers (CredHub
// serialises writes per instance anyway) and reports progress. The last
// name is written alone, after every other write has been answered: the
// other testers take it as the sign that the whole seed is there. (Written
// with the rest, it could land while a middle name is still in flight, and
// a tester would then read that one as missing.)
func SeedAll(ctx context.Context, c *Client, n Names, count, size, parallel int, progress func(done int)) error {
	if count < 1 {
		return nil
	}
	if err := seedRange(ctx, c, n, count-1, size, parallel, progress); err != nil {
		return err
	}
	if err := c.SetJSON(ctx, n.Seed(count-1), SeedValue(count-1, size)); err != nil {
		return fmt.Errorf("seeding %s: %w", n.Seed(count-1), err)
	}
	if progress != nil {
		progress(count)
	}
	return nil
}

// seedRange writes credentials 0..count-1 with parallel writers, reporting
// progress every 100.
func seedRange(ctx context.Context, c *Client, n Names, count, size, parallel int, progress func(done int)) error {
	if parallel < 1 {
		parallel = 1
	}
	var next, done atomic.Int64
	var once sync.Once
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count || ctx.Err() != nil {
					return
				}
				if err := c.SetJSON(ctx, n.Seed(i), SeedValue(i, size)); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("seeding %s: %w", n.Seed(i), err); cancel() })
					return
				}
				d := int(done.Add(1))
				if progress != nil && d%100 == 0 {
					progress(d)
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// VerifySeed reads back the first, the last and a middle seeded credential
// and checks they parse as the JSON that was written.
func VerifySeed(ctx context.Context, c *Client, n Names, count int) error {
	for _, i := range []int{0, count / 2, count - 1} {
		v, err := c.GetJSON(ctx, n.Seed(i))
		if err != nil {
			return fmt.Errorf("verifying the seed: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(v, &m); err != nil || m["password"] == nil {
			return fmt.Errorf("verifying the seed: %s does not hold the JSON credential that was written", n.Seed(i))
		}
	}
	return nil
}

// DeleteAll deletes every credential under the run's prefix (seeded, set by
// any tester, control) and returns how many it deleted. Credentials that
// vanish meanwhile (404) are not errors.
func DeleteAll(ctx context.Context, c *Client, n Names, parallel int) (int, error) {
	var total int
	// A delete that fails (after the client's own retries) does not stop
	// the others: against a target failing many requests, stopping at the
	// first error left most of the run behind. The failed ones are found
	// again and retried in the next round; only rounds that delete nothing
	// at all, several in a row, end the cleanup with an error. A find
	// answer can also be capped, so rounds repeat until the prefix is empty.
	const maxStalled = 3
	stalled := 0
	var lastErr error
	for round := 0; round < 100; round++ {
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		names, err := c.FindPath(ctx, n.Prefix())
		if err != nil {
			lastErr = fmt.Errorf("finding the run's credentials under %s: %w", n.Prefix(), err)
			if stalled++; stalled >= maxStalled || ctx.Err() != nil {
				return total, lastErr
			}
			continue
		}
		if len(names) == 0 {
			return total, nil
		}
		ch := make(chan string)
		var mu sync.Mutex
		var roundErr error
		failed, deleted := 0, 0
		var wg sync.WaitGroup
		for w := 0; w < parallel; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for name := range ch {
					err := c.Delete(ctx, name)
					mu.Lock()
					switch {
					case err == nil:
						total++
						deleted++
					case IsNotFound(err):
						// Gone meanwhile (the next find will not list it),
						// or hidden by an ACL (it will: not progress).
					default:
						failed++
						if roundErr == nil {
							roundErr = fmt.Errorf("deleting %s: %w", name, err)
						}
					}
					mu.Unlock()
				}
			}()
		}
		for _, name := range names {
			if ctx.Err() != nil {
				break
			}
			ch <- name
		}
		close(ch)
		wg.Wait()
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		if roundErr != nil {
			lastErr = fmt.Errorf("%d of %d deletes failed, e.g. %w", failed, len(names), roundErr)
		} else if deleted == 0 {
			lastErr = fmt.Errorf("the target lists them but answers 404 to deleting them (no delete permission?)")
		}
		if deleted > 0 {
			stalled = 0
		} else if stalled++; stalled >= maxStalled {
			return total, fmt.Errorf("%d credentials under %s could not be deleted in %d rounds: %w", len(names), n.Prefix(), maxStalled, lastErr)
		}
	}
	if lastErr != nil {
		return total, fmt.Errorf("credentials under %s still there after 100 rounds of deletes: %w", n.Prefix(), lastErr)
	}
	return total, fmt.Errorf("credentials under %s keep appearing after 100 rounds of deletes", n.Prefix())
}
