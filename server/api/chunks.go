package api

import (
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/backtrail/backtrail/server"
)

// maxChunk bounds one uploaded chunk (sentry-cli sends at most chunkSize).
const maxChunk = 16 << 20

// chunkUpload stores the chunks of a sentry-cli upload: multipart parts
// named "file" (or "file_gzip", gzip-compressed), each named by the SHA-1
// of its uncompressed content, which is checked.
func (s *Server) chunkUpload(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return server.Errorf(server.EINVALID, "chunk upload: %v", err)
	}
	if err := os.MkdirAll(s.ChunkDir, 0o755); err != nil {
		return err
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return server.Errorf(server.EINVALID, "chunk upload: %v", err)
		}
		want := strings.ToLower(part.FileName())
		if b, err := hex.DecodeString(want); err != nil || len(b) != sha1.Size {
			return server.Errorf(server.EINVALID, "chunk name %q is not a SHA-1", part.FileName())
		}
		var src io.Reader = part
		if part.FormName() == "file_gzip" {
			zr, err := gzip.NewReader(part)
			if err != nil {
				return server.Errorf(server.EINVALID, "chunk %s: %v", want, err)
			}
			src = zr
		}
		if err := s.saveChunk(want, io.LimitReader(src, maxChunk+1)); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{})
}

func (s *Server) saveChunk(sum string, r io.Reader) error {
	tmp, err := os.CreateTemp(s.ChunkDir, ".chunk-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha1.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return server.Errorf(server.EINVALID, "chunk %s: %v", sum, err)
	}
	if n > maxChunk {
		return server.Errorf(server.ETOOLARGE, "chunk %s larger than %d bytes", sum, maxChunk)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		return server.Errorf(server.EINVALID, "chunk named %s has SHA-1 %s", sum, got)
	}
	return os.Rename(tmp.Name(), filepath.Join(s.ChunkDir, sum))
}

// assembleRequest is sentry-cli's request: file checksum → chunks.
type assembleRequest map[string]struct {
	Name    string   `json:"name"`
	DebugID string   `json:"debug_id"`
	Chunks  []string `json:"chunks"`
}

type assembleState struct {
	State         string   `json:"state"` // ok, not_found, error
	MissingChunks []string `json:"missingChunks"`
	Detail        *string  `json:"detail"`
	Dif           any      `json:"dif"`
}

// assemble joins uploaded chunks into debug files, or says which chunks
// are missing (sentry-cli asks first, uploads those, and asks again).
func (s *Server) assemble(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	p, err := s.projectByParam(r.Context(), r.PathValue("project"))
	if err != nil {
		return err
	}
	var req assembleRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil {
		return server.Errorf(server.EINVALID, "assemble: %v", err)
	}
	out := make(map[string]assembleState, len(req))
	for sum, file := range req {
		st := assembleState{State: "ok", MissingChunks: []string{}}
		for _, c := range file.Chunks {
			c = strings.ToLower(c)
			if _, err := os.Stat(filepath.Join(s.ChunkDir, c)); errors.Is(err, fs.ErrNotExist) || !isSHA1(c) {
				st.MissingChunks = append(st.MissingChunks, c)
			}
		}
		if len(st.MissingChunks) > 0 {
			st.State = "not_found"
			out[sum] = st
			continue
		}
		dif, err := s.assembleFile(r, p, sum, file.Name, file.Chunks)
		if err != nil {
			msg := server.ErrorMessage(err)
			if server.ErrorCode(err) == server.EINTERNAL {
				return err
			}
			st.State, st.Detail = "error", &msg
		} else {
			st.Dif = dif
		}
		out[sum] = st
	}
	return writeJSON(w, http.StatusOK, out)
}

func isSHA1(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha1.Size
}

func (s *Server) assembleFile(r *http.Request, p *server.Project, sum, name string, chunks []string) (any, error) {
	tmp, err := s.tempFile(".assemble-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha1.New()
	var n int64
	for _, c := range chunks {
		f, err := os.Open(filepath.Join(s.ChunkDir, strings.ToLower(c)))
		if err != nil {
			return nil, err
		}
		k, err := io.Copy(io.MultiWriter(tmp, h), f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if n += k; n > s.Limits.DebugFile {
			return nil, server.Errorf(server.ETOOLARGE, "file larger than %d bytes", s.Limits.DebugFile)
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(sum) {
		return nil, server.Errorf(server.EINVALID, "assembled file has SHA-1 %s, not %s", got, sum)
	}
	files, err := s.addDebugFiles(r.Context(), p, filepath.Base(name), tmp, n)
	if err != nil {
		return nil, err
	}
	// The file is stored whole now; its chunks are not needed again.
	for _, c := range chunks {
		os.Remove(filepath.Join(s.ChunkDir, strings.ToLower(c)))
	}
	f := files[0]
	return map[string]any{
		"id": fmt.Sprint(f.ID), "uuid": f.DebugID, "debugId": f.DebugID, "codeId": f.CodeID,
		"objectName": name, "cpuName": f.Arch, "symbolType": f.Format, "size": f.Size, "sha1": sum,
		"dateCreated": f.UploadedAt, "data": map[string]any{"features": f.Features},
	}, nil
}

// tempFile creates a temporary file for an upload in the data directory
// (beside the chunks), not the system's temporary directory, which may be
// small or on another file system.
func (s *Server) tempFile(pattern string) (*os.File, error) {
	if s.ChunkDir != "" {
		if err := os.MkdirAll(s.ChunkDir, 0o755); err != nil {
			return nil, err
		}
	}
	return os.CreateTemp(s.ChunkDir, pattern)
}
