package workload

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const t0 = int64(1796676792000) // a whole second

func TestParsesCredHubLine(t *testing.T) {
	line := `CEF:0|cloud_foundry|credhub|2.15.20|GET /api/v1/data|GET /api/v1/data|0|rt=1796676792920 suser=app:3c53 suid=mtls-app:3c53 cs1Label=userAuthenticationMechanism cs1=mutual_tls request=/api/v1/data?path=/prod/app1 requestMethod=GET cs3Label=versionUuid cs3=null cs4Label=httpStatusCode cs4=200 src=10.0.0.1, 10.0.0.2 dst=credhub.service.cf.internal cs2Label=resourceName cs2=null cs5Label=resourceUuid cs5=null deviceAction=FIND cs6Label=requestDetails cs6={"nameLike":null,"path":"/prod/app1","paths":null} `
	var rec record
	if reason := parseLine([]byte("<14>1 2026-12-07T10:00:00Z credhub/0 - - - "+line), &rec); reason != "" {
		t.Fatalf("skipped: %s", reason)
	}
	if rec.at != 1796676792920 || rec.typ != FindByPath || rec.status != 200 || rec.auth != authMTLS || rec.name != nil {
		t.Fatalf("record %+v", rec)
	}
}

func TestCountsRequestsNotLines(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	lines = append(lines, getLines(t0, "/a", 3)...)                   // one request, three versions
	lines = append(lines, findLine(t0+1, "/p"), findLine(t0+1, "/p")) // two identical finds
	lines = append(lines, interpolateLines(t0+2, "/x", "/y")...)      // one request, two refs
	lines = append(lines, setLine(t0+3, "/a"))
	w := analyze(t, writeFile(t, dir, "credhub_security_events.log", lines))
	if w.Requests != 5 || w.Lines != 8 {
		t.Fatalf("requests %d lines %d, want 5 and 8", w.Requests, w.Lines)
	}
	for id, want := range map[string]int64{"get_by_name": 1, "find_by_path": 2, "interpolate": 1, "set": 1} {
		if got := typeReq(w, id); got != want {
			t.Errorf("%s: %d requests, want %d", id, got, want)
		}
	}
	// /a (get and set), /x, /y.
	if w.Names.Distinct != 3 || w.Names.Requests != 4 || w.Names.Top1Share != 0.5 {
		t.Errorf("names %+v", w.Names)
	}
}

func TestMergesInstancesWithClocksApart(t *testing.T) {
	dir := t.TempDir()
	// Instance b's clock is an hour behind a's; its file is given first.
	var a, b []string
	for i := 0; i < 10; i++ {
		a = append(a, findLine(t0+int64(i)*100, "/a"))
		b = append(b, findLine(t0-3600_000+int64(i)*1000, "/b"))
	}
	w := analyze(t, writeFile(t, dir, "b.log", b), writeFile(t, dir, "a.log", a))
	if w.Requests != 20 || w.Rates.PeakSecond.Requests != 10 || w.Rates.PeakSecond.At != stamp(t0) {
		t.Fatalf("requests %d peak %+v", w.Requests, w.Rates.PeakSecond)
	}
	if w.Interval.Seconds != 3601 || len(w.Skipped) != 0 {
		t.Fatalf("interval %+v skipped %v", w.Interval, w.Skipped)
	}
}

func TestReordersWithinWindowAndSkipsClockSteppedBack(t *testing.T) {
	dir := t.TempDir()
	lines := []string{findLine(t0+5000, "/a"), findLine(t0, "/a"), findLine(t0+1000, "/a")}
	// A minute and more later, then a line 10 minutes back: a clock stepped back.
	lines = append(lines, findLine(t0+200_000, "/a"), findLine(t0+300_000, "/a"), findLine(t0+10, "/b"))
	w := analyze(t, writeFile(t, dir, "x.log", lines))
	if w.Requests != 5 || w.Skipped[skipBackwards] != 1 {
		t.Fatalf("requests %d skipped %v", w.Requests, w.Skipped)
	}
	if w.Interval.Start != stamp(t0) {
		t.Fatalf("start %s", w.Interval.Start)
	}
}

func TestRates(t *testing.T) {
	dir := t.TempDir()
	// 1000 seconds: second i has i%10 requests, second 500 has 40.
	var lines []string
	for s := int64(0); s < 1000; s++ {
		n := s % 10
		if s == 500 {
			n = 40
		}
		for k := int64(0); k < n; k++ {
			lines = append(lines, findLine(t0+s*1000+k, "/p"))
		}
	}
	var buf bytes.Buffer
	w, err := Analyze(Options{Paths: []string{writeFile(t, dir, "r.log", lines)}, Arrivals: &buf})
	if err != nil {
		t.Fatal(err)
	}
	if w.Rates.PeakSecond.Requests != 40 || w.Rates.PeakSecond.At != stamp(t0+500_000) {
		t.Fatalf("peak %+v", w.Rates.PeakSecond)
	}
	if w.Interval.Seconds != 999 { // second 0 has no request
		t.Fatalf("interval %+v", w.Interval)
	}
	// Nearest rank 990 of 999 seconds: a 9. The busiest minute holds the 40.
	if w.Rates.P99Second != 9 || w.Rates.BusiestMinute.Requests != 40+270 {
		t.Fatalf("rates %+v", w.Rates)
	}
	rows := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(rows) != 1+901 || !strings.HasPrefix(rows[0], "time,unix_s,requests,get_by_name,") {
		t.Fatalf("%d rows, header %q", len(rows), rows[0])
	}
}

func TestHostileInput(t *testing.T) {
	dir := t.TempDir()
	good := []string{findLine(t0, "/a")}
	junk := string([]byte{0, 1, 2, 0xff, 0xfe, '|', 'C', 'E', 'F'})
	long := "CEF:0|" + strings.Repeat("x", 1<<20+10)
	lines := append([]string{"hello", junk, long, "CEF:0|acme|fw|1|a|b|0|rt=1", "CEF:0|cloud_foundry|credhub|2|a|b|0|rt=12 request=/x requestMethod=GET cs4=200 deviceAction=GET"}, good...)
	empty := writeFile(t, dir, "empty.log", nil)
	w := analyze(t, writeFile(t, dir, "h.log", lines), empty)
	want := map[string]int64{skipNotCEF: 2, skipTooLong: 1, skipNotCredHub: 1, skipBadTime: 1, skipEmptyFile: 1}
	for k, v := range want {
		if w.Skipped[k] != v {
			t.Errorf("skipped[%q] = %d, want %d (all: %v)", k, w.Skipped[k], v, w.Skipped)
		}
	}
	if w.Requests != 1 {
		t.Fatalf("requests %d", w.Requests)
	}
	// Only junk: an error, one line, not a silent zero.
	_, err := Analyze(Options{Paths: []string{empty}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "no CredHub audit record") {
		t.Fatalf("err %v", err)
	}
}

func TestTruncatedGzipIsAnError(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := 0; i < 5000; i++ {
		lines = append(lines, findLine(t0+int64(i), "/a"))
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(strings.Join(lines, "\n")))
	zw.Close()
	p := filepath.Join(dir, "credhub_security_events.log.1.gz")
	os.WriteFile(p, buf.Bytes()[:buf.Len()/2], 0o600)
	_, err := Analyze(Options{Paths: []string{p}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("err %v", err)
	}
	// The whole file reads.
	os.WriteFile(p, buf.Bytes(), 0o600)
	if w := analyze(t, p); w.Requests != 5000 {
		t.Fatalf("requests %d", w.Requests)
	}
}

func TestBoshLogsTarball(t *testing.T) {
	dir := t.TempDir()
	inner := tgz(t, map[string]string{
		"./credhub/credhub_security_events.log": strings.Join(getLines(t0, "/a", 2), "\n") + "\n",
		"./credhub/credhub.log":                 "not audit\n",
	})
	outer := tgz(t, map[string]string{"credhub.0.tgz": string(inner),
		"credhub.1.tgz": string(tgz(t, map[string]string{"./credhub/credhub_security_events.log": setLine(t0, "/b") + "\n"}))})
	p := filepath.Join(dir, "cf.credhub.tgz")
	os.WriteFile(p, outer, 0o600)
	w := analyze(t, p)
	if w.Requests != 2 || len(w.Sources) != 2 || len(w.Skipped) != 0 {
		t.Fatalf("requests %d sources %+v skipped %v", w.Requests, w.Sources, w.Skipped)
	}
	p2 := filepath.Join(dir, "other.tgz")
	os.WriteFile(p2, tgz(t, map[string]string{"x.log": "x\n"}), 0o600)
	if _, err := Analyze(Options{Paths: []string{p2}}); err == nil || !strings.Contains(err.Error(), "bosh -d DEPLOYMENT logs credhub") {
		t.Fatalf("err %v", err)
	}
}

func tgz(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestNamesStayPrivateUnlessAsked(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "n.log", append(getLines(t0, "/Secret/Name", 1), getLines(t0+1, "secret/name", 1)...))
	w := analyze(t, p)
	if w.Names.Distinct != 1 || len(w.Names.Top) != 0 {
		t.Fatalf("names %+v", w.Names)
	}
	w2, err := Analyze(Options{Paths: []string{p}, KeepNames: true})
	if err != nil || len(w2.Names.Top) != 1 || w2.Names.Top[0].Name != "/secret/name" || w2.Names.Top[0].Count != 2 {
		t.Fatalf("top %+v %v", w2.Names.Top, err)
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(findLine(t0, "/a")))
	f.Add([]byte(setLine(t0, "/a")))
	f.Add([]byte("CEF:0|cloud_foundry|credhub|||||rt= request= requestMethod= cs4= deviceAction="))
	f.Fuzz(func(t *testing.T, line []byte) {
		var rec record
		if reason := parseLine(line, &rec); reason == "" {
			if rec.at < minRT || rec.at >= maxRT || rec.status < 100 || rec.status > 599 || rec.typ >= numTypes {
				t.Fatalf("accepted a bad record %+v", rec)
			}
		}
	})
}

func TestTruncatedTarballIsAnError(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := 0; i < 3000; i++ {
		lines = append(lines, findLine(t0+int64(i), "/a"))
	}
	b := tgz(t, map[string]string{"./credhub/credhub_security_events.log": strings.Join(lines, "\n")})
	p := filepath.Join(dir, "cf.tgz")
	os.WriteFile(p, b[:len(b)*2/3], 0o600)
	_, err := Analyze(Options{Paths: []string{p}})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "re-fetch") {
		t.Fatalf("err %v", err)
	}
}

func TestSyslogDrainAndCRLF(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		"<14>1 2026-12-07T10:00:00.000Z credhub-0 credhub - - - " + findLine(t0, "/a") + "\r",
		"Dec  7 10:00:00 credhub-1 credhub: " + setLine(t0+1, "/b") + "\r",
	}
	w := analyze(t, writeFile(t, dir, "drain.log", lines))
	if w.Requests != 2 || typeReq(w, "set") != 1 || len(w.Skipped) != 0 {
		t.Fatalf("requests %d types %+v skipped %v", w.Requests, w.Types, w.Skipped)
	}
}
