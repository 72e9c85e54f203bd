package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
)

// projectJSON is a project as the API shows it.
type projectJSON struct {
	*server.Project
	DSN string `json:"dsn"`
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	ps, err := s.Store.Projects(r.Context())
	if err != nil {
		return err
	}
	out := make([]projectJSON, len(ps))
	for i, p := range ps {
		out[i] = projectJSON{p, p.DSN(s.BaseURL)}
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) listIssues(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	pid, err := s.projectParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := server.IssueFilter{ProjectID: pid, Kind: report.Kind(q.Get("kind")), Release: q.Get("release"),
		Status: server.Status(q.Get("status")), Sort: q.Get("sort")}
	if f.Status != "" && !f.Status.Valid() {
		return server.Errorf(server.EINVALID, "unknown status %q", f.Status)
	}
	f.Limit, _ = strconv.Atoi(q.Get("limit"))
	f.Offset, _ = strconv.Atoi(q.Get("offset"))
	is, err := s.Store.Issues(r.Context(), f)
	if err != nil {
		return err
	}
	if is == nil {
		is = []*server.Issue{}
	}
	return writeJSON(w, http.StatusOK, is)
}

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return 0, server.Errorf(server.EINVALID, "bad id %q", r.PathValue("id"))
	}
	return id, nil
}

// issueJSON is an issue with what its page shows besides the issue row.
type issueJSON struct {
	*server.Issue
	Releases []string             `json:"releases"`
	Counts   []server.CountBucket `json:"counts"` // per hour, last 14 days
}

func (s *Server) getIssue(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	is, err := s.Store.Issue(r.Context(), id)
	if err != nil {
		return err
	}
	rel, err := s.Store.IssueReleases(r.Context(), id)
	if err != nil {
		return err
	}
	counts, err := s.Store.IssueCounts(r.Context(), id, time.Now().Add(-14*24*time.Hour))
	if err != nil {
		return err
	}
	if rel == nil {
		rel = []string{}
	}
	if counts == nil {
		counts = []server.CountBucket{}
	}
	return writeJSON(w, http.StatusOK, issueJSON{is, rel, counts})
}

func (s *Server) updateIssue(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var req struct {
		Status server.Status `json:"status"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		return server.Errorf(server.EINVALID, "body: %v", err)
	}
	if err := s.Store.SetIssueStatus(r.Context(), id, req.Status); err != nil {
		return err
	}
	is, err := s.Store.Issue(r.Context(), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, is)
}

func (s *Server) issueEvents(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	es, err := s.Store.Events(r.Context(), id, limit, offset)
	if err != nil {
		return err
	}
	if es == nil {
		es = []*server.Event{}
	}
	return writeJSON(w, http.StatusOK, es)
}

// eventJSON is an event as the API shows it: the stored row's fields and
// the normalized report's.
func eventJSON(e *server.Event) (map[string]any, error) {
	m := map[string]any{}
	if e.Report != nil {
		b, err := json.Marshal(e.Report)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		if m["threads"] == nil {
			m["threads"] = []any{}
		}
		if m["trail"] == nil {
			m["trail"] = []any{}
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, err
	}
	for k, v := range meta {
		m[k] = v
	}
	return m, nil
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	pid, err := s.projectParam(r)
	if err != nil {
		return err
	}
	e, err := s.Store.Event(r.Context(), pid, eventIDParam(r))
	if err != nil {
		return err
	}
	m, err := eventJSON(e)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, m)
}

func (s *Server) rawEvent(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	pid, err := s.projectParam(r)
	if err != nil {
		return err
	}
	e, err := s.Store.Event(r.Context(), pid, eventIDParam(r))
	if err != nil {
		return err
	}
	format, raw, err := s.Store.RawEvent(r.Context(), e.ProjectID, e.EventID)
	if err != nil {
		return err
	}
	ext := map[string]string{server.FormatIPS: ".ips", server.FormatCrash: ".crash", server.FormatGoPanic: ".txt"}[format]
	if ext == "" {
		ext = ".json"
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+e.EventID+ext+`"`)
	w.Header().Set("X-Backtrail-Format", format)
	_, err = w.Write(raw)
	return err
}

func (s *Server) missingSymbols(w http.ResponseWriter, r *http.Request) error {
	if err := s.admin(r); err != nil {
		return err
	}
	pid, err := s.projectParam(r)
	if err != nil {
		return err
	}
	ms, err := s.Store.MissingSymbols(r.Context(), pid)
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []*server.MissingSymbols{}
	}
	return writeJSON(w, http.StatusOK, ms)
}

// eventIDParam returns the event id of the path in stored form: clients
// show ids with dashes or in upper case.
func eventIDParam(r *http.Request) string {
	return strings.ToLower(strings.ReplaceAll(r.PathValue("id"), "-", ""))
}
