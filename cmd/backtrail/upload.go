package main

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/internal/progress"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

func init() {
	register(&command{
		name:  "upload",
		args:  "--url URL --token TOKEN [--project NAME] [--json] PATH...",
		short: "upload debug files to a backtrail server",
		long: `
Upload sends debug files to a backtrail server: ELF and Mach-O files, Go
binaries, .dSYM bundles (zipped on the fly) and symcaches (from backtrail
symcache build: a fraction of a big debug file's size). Directories are
walked. Files the server already has (same debug id and architecture; for
a symcache, a symcache of them) are skipped, so uploading a build directory
twice costs one listing. A binary built with -gsplit-dwarf is sent with
the symcache of its split DWARF (its .dwp or .dwo files, found as symbolize
finds them), since the server reads only what it is sent. On a terminal a
progress bar shows the bytes sent.
`,
		flags: func(fs *flag.FlagSet) {
			fs.String("url", "", "server `URL`, e.g. http://127.0.0.1:7070")
			fs.String("token", "", "admin `token` (default: BACKTRAIL_ADMIN_TOKEN)")
			fs.String("project", "default", "project `name`")
			fs.Bool("json", false, "print one JSON object per uploaded object")
		},
		run: runUpload,
	})
}

// uploadItem is one thing to send: a debug file, a .dSYM bundle or a
// symcache.
type uploadItem struct {
	path string
	name string // as the server records it; the base of path when ""
	dsym bool
	size int64
	ids  []string // debug_id/arch of its objects, and "/symcache" for a symcache
}

func runUpload(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	base := strings.TrimRight(flagString(fs, "url"), "/")
	token := flagString(fs, "token")
	if token == "" {
		token = os.Getenv("BACKTRAIL_ADMIN_TOKEN")
	}
	if base == "" || token == "" || len(args) == 0 {
		return usagef("need --url, --token and at least one PATH")
	}
	project := flagString(fs, "project")
	tmp, err := os.MkdirTemp("", "backtrail-upload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	items, err := collectUploads(args, tmp, e.stderr)
	if err != nil {
		return err
	}
	have, err := serverDebugIDs(ctx, base, token, project)
	if err != nil {
		return err
	}
	var todo []uploadItem
	var total int64
	skipped := 0
	for _, it := range items {
		missing := false
		for _, id := range it.ids {
			if !have[id] {
				missing = true
			}
		}
		if !missing {
			skipped++
			continue
		}
		todo = append(todo, it)
		total += it.size
	}
	bar := progress.New(e.stderr, e.isTerminal, "upload", total)
	var sent int64
	asJSON := flagString(fs, "json") == "true"
	for _, it := range todo {
		body, name, err := uploadBody(it)
		if err != nil {
			return err
		}
		files, err := postDebugFile(ctx, base, token, project, name, body, func(n int64) { bar.Set(sent + n) })
		if err != nil {
			return fmt.Errorf("%s: %w", it.path, err)
		}
		sent += it.size
		for _, f := range files {
			if asJSON {
				writeJSONLine(e.stdout, f)
			} else if !e.isTerminal {
				fmt.Fprintf(e.stdout, "uploaded %s %s %s\n", f["debug_id"], f["arch"], it.path)
			}
		}
	}
	bar.Finish()
	if !asJSON {
		fmt.Fprintf(e.stdout, "%d uploaded, %d already on the server\n", len(todo), skipped)
	}
	return nil
}

// collectUploads walks the paths for debug files, .dSYM bundles and
// symcaches, and builds into tmp the symcaches of binaries whose DWARF is
// split; their warnings go to stderr.
func collectUploads(paths []string, tmp string, stderr io.Writer) ([]uploadItem, error) {
	var items []uploadItem
	add := func(p string, dsym bool) error {
		if !dsym && symcache.IsFile(p) {
			it, err := symcacheItem(p)
			if err == nil {
				items = append(items, it)
			}
			return err
		}
		target := p
		if dsym {
			inner, err := debugfile.Open(p)
			if err != nil {
				return err
			}
			target = inner.Path
			inner.Close()
		}
		f, err := debugfile.Open(target)
		if err != nil {
			return err
		}
		it := uploadItem{path: p, dsym: dsym}
		for _, o := range f.Objects {
			it.ids = append(it.ids, o.DebugID.String()+"/"+o.Arch)
		}
		f.Close()
		fi, err := os.Stat(target)
		if err != nil {
			return err
		}
		it.size = fi.Size()
		items = append(items, it)
		sc, err := splitSymcache(target, tmp, stderr)
		if err != nil || sc == "" {
			return err
		}
		split, err := symcacheItem(sc)
		if err != nil {
			return err
		}
		split.name = filepath.Base(target) + ".symcache"
		items = append(items, split)
		return nil
	}
	for _, root := range paths {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			if err := add(root, false); err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasSuffix(root, ".dSYM") {
			if err := add(root, true); err != nil {
				return nil, err
			}
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if strings.HasSuffix(p, ".dSYM") {
					if err := add(p, true); err != nil {
						return err
					}
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !isDebugFile(p) {
				return nil
			}
			return add(p, false)
		})
		if err != nil {
			return nil, err
		}
	}
	return items, nil
}

func isDebugFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [8]byte
	n, _ := io.ReadFull(f, b[:])
	return debugfile.Sniff(b[:n]) != debugfile.FormatUnknown || symcache.IsSymcache(b[:n])
}

// symcacheItem is the upload of the symcache at p.
func symcacheItem(p string) (uploadItem, error) {
	sc, err := symcache.Open(p)
	if err != nil {
		return uploadItem{}, fmt.Errorf("%s: %w", p, err)
	}
	defer sc.Close()
	info := sc.Info()
	id := debugfile.DebugID{UUID: info.DebugID, Age: info.DebugAge}
	return uploadItem{path: p, size: int64(sc.Size()), ids: []string{id.String() + "/" + info.Arch + "/symcache"}}, nil
}

// splitSymcache builds into dir the symcache of the ELF file at path when
// its DWARF is split (-gsplit-dwarf) and some of its split units are found,
// and returns its path; "" otherwise. The server cannot follow the
// skeletons' file names: the symcache carries what they point to.
func splitSymcache(path, dir string, stderr io.Writer) (string, error) {
	f, err := debugfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if len(f.Objects) != 1 || f.Objects[0].Format != debugfile.FormatELF {
		return "", nil
	}
	o := f.Objects[0]
	f.FollowSplitDWARF(path, "")
	skeletons := countSkeletons(o)
	if skeletons == 0 || len(f.SplitDWARFErrors()) == skeletons {
		warnSplit(stderr, f.SplitDWARFErrors())
		return "", nil
	}
	w, err := os.CreateTemp(dir, filepath.Base(path)+"-*.symcache")
	if err != nil {
		return "", err
	}
	out := w.Name()
	err = symbolize.WriteObject(w, o, o, symbolize.BuildOptions{})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	warnSplit(stderr, f.SplitDWARFErrors())
	if err != nil {
		return "", fmt.Errorf("symcache of %s: %w", path, err)
	}
	return out, nil
}

// uploadBody returns what to send for an item: the file, or a zip of the
// .dSYM bundle.
func uploadBody(it uploadItem) ([]byte, string, error) {
	if !it.dsym {
		b, err := os.ReadFile(it.path)
		return b, cmp.Or(it.name, filepath.Base(it.path)), err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	base := filepath.Dir(it.path)
	err := filepath.WalkDir(it.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	return buf.Bytes(), filepath.Base(it.path), err
}

// serverDebugIDs returns the debug_id/arch pairs the server has.
func serverDebugIDs(ctx context.Context, base, token, project string) (map[string]bool, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/debug-files?project="+url.QueryEscape(project), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, httpError(resp)
	}
	var files []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&files); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, f := range files {
		id := fmt.Sprintf("%v/%v", f["debug_id"], f["arch"])
		have[id] = true
		if f["format"] == "symcache" {
			have[id+"/symcache"] = true
		}
	}
	return have, nil
}

type countingReader struct {
	r    io.Reader
	n    int64
	tick func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.tick(c.n)
	return n, err
}

func postDebugFile(ctx context.Context, base, token, project, name string, body []byte, tick func(int64)) ([]map[string]any, error) {
	u := base + "/api/v1/debug-files?project=" + url.QueryEscape(project) + "&name=" + url.QueryEscape(name)
	req, _ := http.NewRequestWithContext(ctx, "POST", u, &countingReader{r: bytes.NewReader(body), tick: tick})
	req.ContentLength = int64(len(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/octet-stream")
	c := &http.Client{Timeout: 30 * time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, httpError(resp)
	}
	var files []map[string]any
	err = json.NewDecoder(resp.Body).Decode(&files)
	return files, err
}

func httpError(resp *http.Response) error {
	var e struct{ Error, Detail string }
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if json.Unmarshal(b, &e) == nil && e.Detail != "" {
		return fmt.Errorf("server: %s (%s)", e.Detail, resp.Status)
	}
	return errors.New("server: " + resp.Status)
}

// countSkeletons returns how many of o's units are skeletons of split
// DWARF. Reading their roots looks for their split files, as
// FollowSplitDWARF set up: the file's SplitDWARFErrors then tell which are
// missing.
func countSkeletons(o *debugfile.Object) int {
	d, err := o.DWARF()
	if err != nil || d == nil {
		return 0
	}
	n := 0
	units := d.Units()
	for i := range units {
		var ui dwarf.UnitInfo
		if d.ReadRoot(&units[i], &ui) == nil && ui.DWOName != nil {
			n++
		}
	}
	return n
}
