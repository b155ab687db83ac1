package targetload

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSamplesFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	in := []Sample{
		{Source: "proc", Resource: CredHub, Instance: "pid 12", Start: sec(1), End: sec(2.5), CPU: 0.4321, RSSBytes: 1 << 20},
		{Source: "bosh", Resource: Database, Instance: "db,0", Start: sec(-8), End: sec(2), CPU: math.NaN(), RSSBytes: 5},
	}
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path); err == nil {
		t.Error("Create overwrote an existing file")
	}
	got, warnings, err := Read(path)
	if err != nil || len(warnings) > 0 || len(got) != 2 {
		t.Fatalf("Read = %v %v %v", got, warnings, err)
	}
	if got[0].CPU != 0.4321 || got[0].Start != sec(1) || got[0].RSSBytes != 1<<20 || got[1].Instance != "db_0" || !math.IsNaN(got[1].CPU) || got[1].Start != sec(-8) {
		t.Errorf("read back %+v", got)
	}
}

func TestSamplesFileHostile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, text := range map[string]string{"empty": "", "other header": "a,b,c\n1,2,3\n", "quote": "\"\n"} {
		if _, _, err := Read(write(name, text)); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	bad := OldHeader + "\n" +
		"proc,credhub,x,1,2,0.5,\n" + // good
		"proc,credhub,x,2,1,0.5,\n" + // end before start
		"proc,credhub,x,1,2,NaN,\n" + // NaN share
		"proc,credhub,x,1,2,7,\n" + // share far over 1
		"proc,credhub,x,1,2,,\n" + // nothing measured
		"proc,credhub,x,1,2,0.1,-5\n" + // negative memory
		"proc,credhub,x,1,2\n" + // short
		",credhub,x,1,2,0.1,\n" + // no source
		"proc,credhub,x,1e300,1e301,0.1,\n" // absurd times
	got, warnings, err := Read(write("bad", bad))
	if err != nil || len(got) != 1 {
		t.Fatalf("Read = %d samples, %v", len(got), err)
	}
	if len(warnings) != 4 || !strings.Contains(warnings[0], "bad:3:") || !strings.Contains(warnings[3], "8 lines skipped") {
		t.Errorf("warnings %q", warnings)
	}
}

// FuzzReadSamples: any file reads without a panic, every sample it keeps
// is a usable one, and every warning is one line.
func FuzzReadSamples(f *testing.F) {
	f.Add(Header + "\nproc,credhub,pid 1,0,1,0.5,,1,cpus 1,0.9,0,0,0.1\n")
	f.Add(OldHeader + "\nbosh,database,db/0,0,10,0.2,100\n")
	f.Add(Header + "\nproc,credhub,x,0,1,,,,vm a,1.2,,,\n\"\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, ws, err := read(strings.NewReader(text), "f")
		if err != nil {
			return
		}
		for _, s := range got {
			if s.End < s.Start || s.Source == "" || (math.IsNaN(s.CPU) && s.RSSBytes < 0 && math.IsNaN(s.MachineBusy)) || s.CPU > maxShare || s.MachineBusy > maxShare {
				t.Errorf("kept %+v", s)
			}
		}
		for _, w := range ws {
			if strings.Contains(w, "\n") {
				t.Errorf("warning of several lines %q", w)
			}
		}
	})
}
