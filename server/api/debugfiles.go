package api

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/process"
	"github.com/backtrail/backtrail/symcache"
)

// maxZipEntries bounds the files read from one uploaded archive.
const maxZipEntries = 10000

// postDebugFile stores an uploaded debug file — raw ELF or Mach-O (thin or
// fat, Go binaries too) or a zip of such files, like a zipped .dSYM bundle
// — for the project named by ?project= (default "default").
func (s *Server) postDebugFile(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	name := r.URL.Query().Get("project")
	if name == "" {
		name = "default"
	}
	p, err := s.projectByParam(r.Context(), name)
	if err != nil {
		return err
	}
	tmp, err := s.tempFile(".upload-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, http.MaxBytesReader(w, r.Body, s.Limits.DebugFile))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return server.Errorf(server.ETOOLARGE, "debug file larger than %d bytes", s.Limits.DebugFile)
		}
		return server.Errorf(server.EINVALID, "reading upload: %v", err)
	}
	fileName := r.URL.Query().Get("name")
	if fileName == "" {
		fileName = "upload"
	}
	files, err := s.addDebugFiles(r.Context(), p, fileName, tmp, n)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, files)
}

func (s *Server) projectByParam(ctx context.Context, v string) (*server.Project, error) {
	if id, err := strconv.ParseInt(v, 10, 64); err == nil {
		return s.Store.Project(ctx, id)
	}
	return s.Store.ProjectByName(ctx, v)
}

// addDebugFiles stores the debug files in an upload of size n read from
// f: the upload itself, or each ELF or Mach-O file in it when it is a zip.
// Files that are neither are ignored; an upload with none is an error.
func (s *Server) addDebugFiles(ctx context.Context, p *server.Project, name string, f io.ReaderAt, n int64) ([]*server.DebugFile, error) {
	var head [8]byte
	f.ReadAt(head[:], 0)
	if bytes.HasPrefix(head[:], []byte("PK\x03\x04")) {
		zr, err := zip.NewReader(f, n)
		if err != nil {
			return nil, server.Errorf(server.EINVALID, "zip: %v", err)
		}
		if len(zr.File) > maxZipEntries {
			return nil, server.Errorf(server.ETOOLARGE, "zip holds %d files, at most %d are read", len(zr.File), maxZipEntries)
		}
		var out []*server.DebugFile
		var budget = s.Limits.DebugFile
		for _, zf := range zr.File {
			if zf.FileInfo().IsDir() || strings.HasPrefix(path.Base(zf.Name), "._") {
				continue
			}
			if int64(zf.UncompressedSize64) > budget {
				return nil, server.Errorf(server.ETOOLARGE, "zip entry %s: files larger than %d bytes in all", zf.Name, s.Limits.DebugFile)
			}
			rc, err := zf.Open()
			if err != nil {
				return nil, server.Errorf(server.EINVALID, "zip entry %s: %v", zf.Name, err)
			}
			var sniff [8]byte
			k, _ := io.ReadFull(rc, sniff[:])
			if debugfile.Sniff(sniff[:k]) == debugfile.FormatUnknown && !symcache.IsSymcache(sniff[:k]) {
				rc.Close()
				continue
			}
			lr := &io.LimitedReader{R: io.MultiReader(bytes.NewReader(sniff[:k]), uploadReader{rc, zf.Name}), N: budget + 1}
			fs, err := s.storeDebugFile(ctx, p, path.Base(zf.Name), lr)
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("zip entry %s: %w", zf.Name, err)
			}
			budget -= int64(zf.UncompressedSize64)
			out = append(out, fs...)
		}
		if len(out) == 0 {
			return nil, server.Errorf(server.EINVALID, "zip holds no ELF, Mach-O or symcache file")
		}
		return out, nil
	}
	return s.storeDebugFile(ctx, p, name, io.NewSectionReader(f, 0, n))
}

// uploadReader marks errors reading an upload, such as a zip entry whose
// content does not match its header, as the uploader's.
type uploadReader struct {
	r    io.Reader
	name string
}

func (u uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err != nil && err != io.EOF {
		err = &server.Error{Code: server.EINVALID, Message: fmt.Sprintf("zip entry %s: %v", u.name, err), Err: err}
	}
	return n, err
}

// storeDebugFile stores one debug file for a project, then forgets that
// its modules had no symbols and queues again the events that lacked them.
func (s *Server) storeDebugFile(ctx context.Context, p *server.Project, name string, r io.Reader) ([]*server.DebugFile, error) {
	all, added, err := process.AddDebugFile(ctx, s.Store, s.Blobs, p.ID, name, r)
	if err != nil {
		return nil, err
	}
	for _, df := range added {
		if s.Symbols != nil {
			s.Symbols.Forget(df.DebugID, df.CodeID)
		}
		ids, err := s.Store.EventsMissing(ctx, p.ID, df.DebugID)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			if err := s.Store.Requeue(ctx, ids); err != nil {
				return nil, err
			}
			if s.Processor != nil {
				s.Processor.Notify()
			}
		}
	}
	return all, nil
}

func (s *Server) listDebugFiles(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	pid, err := s.projectParam(r)
	if err != nil {
		return err
	}
	var fs []*server.DebugFile
	if pid != 0 {
		fs, err = s.Store.DebugFiles(r.Context(), pid)
	} else {
		ps, err2 := s.Store.Projects(r.Context())
		if err2 != nil {
			return err2
		}
		for _, p := range ps {
			pf, err2 := s.Store.DebugFiles(r.Context(), p.ID)
			if err2 != nil {
				return err2
			}
			fs = append(fs, pf...)
		}
	}
	if err != nil {
		return err
	}
	if fs == nil {
		fs = []*server.DebugFile{}
	}
	return writeJSON(w, http.StatusOK, fs)
}

func (s *Server) deleteDebugFile(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	f, err := s.Store.DebugFile(r.Context(), id)
	if err != nil {
		return err
	}
	if err := s.Store.DeleteDebugFile(r.Context(), id); err != nil {
		return err
	}
	// The blob may hold other objects of the same file (the slices of a
	// universal binary, each with its own ids), or the same file uploaded
	// to another project. Deleting is rare: look at every record.
	shared, err := s.blobInUse(r.Context(), f.Blob)
	if err != nil {
		return err
	}
	if !shared {
		s.Blobs.Delete(r.Context(), f.Blob)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// blobInUse reports whether any debug file of any project is stored in the
// blob at addr.
func (s *Server) blobInUse(ctx context.Context, addr string) (bool, error) {
	ps, err := s.Store.Projects(ctx)
	if err != nil {
		return false, err
	}
	for _, p := range ps {
		fs, err := s.Store.DebugFiles(ctx, p.ID)
		if err != nil {
			return false, err
		}
		for _, f := range fs {
			if f.Blob == addr {
				return true, nil
			}
		}
	}
	return false, nil
}

// debuginfod serves debug files by GNU build id in debuginfod's layout:
// /buildid/<id>/debuginfo (a file with DWARF) and /buildid/<id>/executable
// (the binary). The request authenticates with a project key or the admin
// token as a Bearer token, or with the key in the path:
// /debuginfod/<key>/buildid/<id>/… , which is what DEBUGINFOD_URLS can
// carry.
func (s *Server) debuginfod(w http.ResponseWriter, r *http.Request) error {
	pid := int64(0)
	key := r.PathValue("key")
	if key == "" {
		key = bearer(r)
	}
	if s.admin(r) != nil {
		if key == "" {
			return server.Errorf(server.EUNAUTHORIZED, "a project key or the admin token is required")
		}
		p, err := s.projectByKey(r.Context(), key)
		if err != nil {
			return err
		}
		pid = p.ID
	}
	id := strings.ToLower(r.PathValue("id"))
	if _, err := hex.DecodeString(id); err != nil || len(id) < 8 {
		return server.Errorf(server.EINVALID, "bad build id %q", r.PathValue("id"))
	}
	fs, err := s.Store.FindDebugFiles(r.Context(), pid, "", id)
	if err != nil {
		return err
	}
	wantDebug := strings.HasSuffix(r.URL.Path, "/debuginfo")
	sort.SliceStable(fs, func(i, j int) bool { return score(fs[i], wantDebug) > score(fs[j], wantDebug) })
	if (len(fs) == 0 || score(fs[0], wantDebug) < 0) && s.Symbols != nil && s.Symbols.Upstream != nil {
		// Ask upstream debuginfod servers, on behalf of the key's project
		// (the default project for the admin).
		into := pid
		if into == 0 {
			if p, err := s.Store.ProjectByName(r.Context(), "default"); err == nil {
				into = p.ID
			}
		}
		kind := "executable"
		if wantDebug {
			kind = "debuginfo"
		}
		if got, err := s.Symbols.Upstream.Fetch(r.Context(), s.Store, s.Blobs, into, id, kind); err == nil {
			fs = got
			sort.SliceStable(fs, func(i, j int) bool { return score(fs[i], wantDebug) > score(fs[j], wantDebug) })
		}
	}
	if len(fs) == 0 || score(fs[0], wantDebug) < 0 {
		return server.Errorf(server.ENOTFOUND, "no debug file with build id %s", id)
	}
	rc, err := s.Blobs.Open(r.Context(), fs[0].Blob)
	if err != nil {
		return err
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(fs[0].Size, 10))
	w.Header().Set("X-Debuginfod-File", fs[0].Name)
	_, err = io.Copy(w, rc)
	return err
}

// score ranks debug files for a debuginfod request; negative means the
// file cannot answer it.
func score(f *server.DebugFile, wantDebug bool) int {
	if f.Format == process.FormatSymcache {
		return -1 // not a file debuginfod clients can read
	}
	has := func(x string) bool {
		for _, y := range f.Features {
			if y == x {
				return true
			}
		}
		return false
	}
	if wantDebug {
		if !has("debug") {
			return -1
		}
		if f.Kind == "debug" {
			return 2
		}
		return 1
	}
	if f.Kind == "debug" {
		return -1
	}
	return 1
}

// chunkOptions tells sentry-cli how to upload: in SHA-1 named chunks,
// gzip-compressed, to the chunk-upload endpoint, then assembled.
func (s *Server) chunkOptions(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"url":              s.BaseURL + "/api/0/organizations/" + r.PathValue("org") + "/chunk-upload/",
		"chunkSize":        8 << 20,
		"chunksPerRequest": 64,
		"maxFileSize":      s.Limits.DebugFile,
		"maxRequestSize":   32 << 20,
		"concurrency":      2,
		"hashAlgorithm":    "sha1",
		"compression":      []string{"gzip"},
		"accept":           []string{"debug_files"},
	})
}
