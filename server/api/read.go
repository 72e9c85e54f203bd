package api

import (
	"context"
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
	n, step, err := countsParam(q.Get("counts"))
	if err != nil {
		return err
	}
	is, err := s.Store.Issues(r.Context(), f)
	if err != nil {
		return err
	}
	if is == nil {
		is = []*server.Issue{}
	}
	if n == 0 {
		return writeJSON(w, http.StatusOK, is)
	}
	out, err := s.withCounts(r.Context(), is, n, step, time.Now())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

// issueListJSON is an issue in a list asked for with ?counts=: the
// issue's fields and its events per period, oldest first, the last period
// ending with the current hour. The web UI draws them as sparklines.
type issueListJSON struct {
	*server.Issue
	Counts []int64 `json:"counts"`
}

// countsParam reads the ?counts= flag of the issues list: "24h" asks for
// 24 hourly counts, "14d" for 14 daily ones; empty asks for none.
func countsParam(v string) (n int, step time.Duration, err error) {
	switch v {
	case "":
		return 0, 0, nil
	case "24h":
		return 24, time.Hour, nil
	case "14d":
		return 14, 24 * time.Hour, nil
	}
	return 0, 0, server.Errorf(server.EINVALID, "counts: want 24h or 14d, not %q", v)
}

// issueCountsSincer is a store that reads the hourly counts of many
// issues in one query; other stores are asked issue by issue.
type issueCountsSincer interface {
	IssueCountsSince(ctx context.Context, ids []int64, since time.Time) (map[int64][]server.CountBucket, error)
}

// withCounts adds to each issue its events in n periods of step, the last
// one ending with the hour of now. It reads the hourly rollups only.
func (s *Server) withCounts(ctx context.Context, is []*server.Issue, n int, step time.Duration, now time.Time) ([]issueListJSON, error) {
	end := now.UTC().Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-time.Duration(n) * step)
	var byIssue map[int64][]server.CountBucket
	if cs, ok := s.Store.(issueCountsSincer); ok {
		ids := make([]int64, len(is))
		for i, x := range is {
			ids[i] = x.ID
		}
		var err error
		if byIssue, err = cs.IssueCountsSince(ctx, ids, start); err != nil {
			return nil, err
		}
	} else {
		byIssue = make(map[int64][]server.CountBucket, len(is))
		for _, x := range is {
			bs, err := s.Store.IssueCounts(ctx, x.ID, start)
			if err != nil {
				return nil, err
			}
			byIssue[x.ID] = bs
		}
	}
	out := make([]issueListJSON, len(is))
	for i, x := range is {
		counts := make([]int64, n)
		for _, b := range byIssue[x.ID] {
			if k := int(b.Hour.Sub(start) / step); k >= 0 && k < n {
				counts[k] += b.Count
			}
		}
		out[i] = issueListJSON{x, counts}
	}
	return out, nil
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
