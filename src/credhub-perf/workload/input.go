package workload

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// auditLogBase is the name (before rotation suffixes) of CredHub's audit
// log in the credhub job's log directory.
const auditLogBase = "credhub_security_events.log"

// maxSources bounds the files read at once (each holds a read buffer and
// a reorder window).
const maxSources = 512

// input is one file to read as a source.
type input struct {
	name string // what messages call it
	path string
}

// expandInputs turns the command line's paths into the files to read:
// plain and gzipped logs as they are, and from a tarball (`bosh logs`)
// every credhub_security_events.log* inside it, nested tarballs included,
// copied to tmp so that all can be read side by side.
func expandInputs(paths []string, tmp func() (string, error)) ([]input, error) {
	var out []input
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return nil, fmt.Errorf("%s is a directory: pass the log files in it (%s*)", p, filepath.Join(p, auditLogBase))
		}
		isTar, err := isTarball(p)
		if err != nil {
			return nil, err
		}
		if !isTar {
			out = append(out, input{name: p, path: p})
			continue
		}
		dir, err := tmp()
		if err != nil {
			return nil, err
		}
		found, err := extractAuditLogs(p, dir)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: a tarball without any %s*: pass the tarball of `bosh -d DEPLOYMENT logs credhub` (the credhub instance group), or the log files themselves", p, auditLogBase)
		}
		out = append(out, found...)
	}
	if len(out) > maxSources {
		return nil, fmt.Errorf("%d log files: more than %d at once; concatenate each instance's rotated files first (zcat), then pass one file per instance", len(out), maxSources)
	}
	return out, nil
}

// openLog opens a plain or gzipped log.
func openLog(p string) (io.Reader, io.Closer, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	magic, _ := br.Peek(2)
	if !bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		return br, f, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: a broken gzip header: %w (re-fetch the file)", p, err)
	}
	return zr, f, nil
}

// isTarball tells whether p (plain or gzipped) is a tar archive.
func isTarball(p string) (bool, error) {
	r, c, err := openLog(p)
	if err != nil {
		return false, err
	}
	defer c.Close()
	return looksLikeTar(r)
}

func looksLikeTar(r io.Reader) (bool, error) {
	var hdr [512]byte
	n, err := io.ReadFull(r, hdr[:])
	if n < len(hdr) {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return false, nil
		}
		return false, err
	}
	return string(hdr[257:262]) == "ustar", nil
}

// extractAuditLogs copies every audit log in tarball p (and in tarballs
// inside it: a deployment's `bosh logs` holds one per instance) to dir.
func extractAuditLogs(p, dir string) ([]input, error) {
	r, c, err := openLog(p)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []input
	err = walkTar(r, p, dir, 0, &out)
	return out, err
}

func walkTar(r io.Reader, label, dir string, depth int, out *[]input) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: a broken tarball: %w (re-fetch it)", label, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		base := path.Base(hdr.Name)
		entry := label + ":" + strings.TrimPrefix(hdr.Name, "./")
		switch {
		case strings.HasPrefix(base, auditLogBase):
			if err := copyEntry(tr, entry, dir, out); err != nil {
				return err
			}
		case depth < 2 && (strings.HasSuffix(base, ".tgz") || strings.HasSuffix(base, ".tar.gz") || strings.HasSuffix(base, ".tar")):
			if err := walkNested(tr, entry, dir, depth, out); err != nil {
				return err
			}
		}
	}
}

func walkNested(r io.Reader, label, dir string, depth int, out *[]input) error {
	br := bufio.NewReader(r)
	var inner io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: a broken gzip header: %w (re-fetch the tarball)", label, err)
		}
		inner = zr
	}
	err := walkTar(inner, label, dir, depth+1, out)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: truncated (re-fetch the tarball)", label)
	}
	return err
}

func copyEntry(r io.Reader, label, dir string, out *[]input) error {
	f, err := os.CreateTemp(dir, "audit-*.log")
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) {
		return fmt.Errorf("%s: the tarball is truncated or corrupt here (an interrupted download?): re-fetch it", label)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	*out = append(*out, input{name: label, path: f.Name()})
	return nil
}
