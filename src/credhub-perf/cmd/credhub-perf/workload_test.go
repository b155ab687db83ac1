package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func auditFind(at int64) string {
	return fmt.Sprintf("CEF:0|cloud_foundry|credhub|2.15.20|GET /api/v1/data|GET /api/v1/data|0|rt=%d suser=app:1 suid=mtls-app:1 cs1Label=userAuthenticationMechanism cs1=mutual_tls request=/api/v1/data?path=/p requestMethod=GET cs3Label=versionUuid cs3=null cs4Label=httpStatusCode cs4=200 src=10.0.0.1 dst=credhub cs2Label=resourceName cs2=null cs5Label=resourceUuid cs5=null deviceAction=FIND cs6Label=requestDetails cs6={\"nameLike\":null,\"path\":\"/p\",\"paths\":null} ", at)
}

func TestWorkloadCommand(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := int64(0); i < 30; i++ {
		lines = append(lines, auditFind(1796676792000+i*100))
	}
	log := filepath.Join(dir, "credhub_security_events.log")
	os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"workload", log, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var w struct {
		Format   string
		Requests int64
		Rates    struct {
			PeakSecond struct{ Requests int64 } `json:"peak_second"`
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "workload.json"))
	if err != nil || json.Unmarshal(b, &w) != nil {
		t.Fatalf("workload.json: %v %s", err, b)
	}
	if w.Format != "credhub-perf-workload/1" || w.Requests != 30 || w.Rates.PeakSecond.Requests != 10 {
		t.Fatalf("workload %+v", w)
	}
	if !strings.Contains(stdout.String(), "find_by_path") || !strings.Contains(stdout.String(), "not replayable by credhub-perf: find_by_path 100.0 %") {
		t.Fatalf("summary:\n%s", stdout.String())
	}
	csv, _ := os.ReadFile(filepath.Join(out, "workload-arrivals.csv"))
	if n := strings.Count(string(csv), "\n"); n != 4 {
		t.Fatalf("arrivals: %d lines:\n%s", n, csv)
	}
	if _, err := os.Stat(filepath.Join(out, "workload-arrivals.csv.tmp")); err == nil {
		t.Fatal("a .tmp file left behind")
	}
}

func TestWorkloadHostile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := int64(0); i < 3000; i++ {
		zw.Write([]byte(auditFind(1796676792000+i) + "\n"))
	}
	zw.Close()
	cases := map[string][]string{
		"no log":       {"workload"},
		"missing file": {"workload", filepath.Join(dir, "nope.log")},
		"truncated gz": {"workload", write("t.log.1.gz", gz.Bytes()[:gz.Len()/2])},
		"empty file":   {"workload", write("e.log", nil)},
		"binary junk":  {"workload", write("j.bin", []byte{0, 0x7f, 'E', 'L', 'F', 0xff, '\n', 1, 2, 3})},
		"unknown flag": {"workload", "--names", write("x.log", []byte(auditFind(1796676792000)+"\n"))},
		"a directory":  {"workload", dir},
		"1 MiB line":   {"workload", write("l.log", append(bytes.Repeat([]byte("CEF:0|"), 200000), '\n'))},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(append(args, "--out", filepath.Join(dir, "o-"+name)), &stdout, &stderr)
			msg := strings.TrimRight(stderr.String(), "\n")
			if code != 2 || msg == "" || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
				t.Fatalf("exit %d, stderr %q", code, msg)
			}
		})
	}
}
