package sprintview

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/revision"
)

//go:embed assets
var assets embed.FS

// Poll is how often the live stream compares the refs.
const Poll = 500 * time.Millisecond

// Server is the page's HTTP handler. It never writes to the repository.
type Server struct {
	deps  Deps
	pages map[string]*template.Template
	files http.Handler
}

var funcs = template.FuncMap{
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"join": func(xs []string) string { return strings.Join(xs, ", ") },
	"add":  func(a, b int) int { return a + b },
}

// New parses the embedded templates.
func New(d Deps) (*Server, error) {
	s := &Server{deps: d, pages: map[string]*template.Template{}}
	for _, p := range []string{"sprint", "task", "board", "escalations", "records", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/"+p+".html")
		if err != nil {
			return nil, apperr.Wrap(apperr.Internal, err, "cannot parse the %s page", p)
		}
		s.pages[p] = t
	}
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "cannot read the embedded assets")
	}
	s.files = http.StripPrefix("/assets/", http.FileServer(http.FS(sub)))
	return s, nil
}

// ServeHTTP answers GET and HEAD only, from a loopback Host only (a page
// on another site cannot reach it through a rebound name).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "read-only: GET only", http.StatusMethodNotAllowed)
		return
	}
	if !Loopback(r.Host) {
		http.Error(w, "this page answers on a loopback address only", http.StatusForbidden)
		return
	}
	ctx := r.Context()
	switch r.URL.Path {
	case "/", "/sprint":
		sp, err := LoadSprint(ctx, s.deps)
		if err != nil {
			s.fail(w, err)
			return
		}
		s.render(w, "sprint", map[string]any{"Title": fmt.Sprintf("Sprint %d", sp.Number), "Nav": "sprint", "Sprint": sp, "Graph": Layout(sp)})
	case "/task":
		id := r.URL.Query().Get("id")
		page, err := LoadTask(ctx, s.deps, id)
		if err != nil {
			s.fail(w, err)
			return
		}
		if page == nil {
			w.WriteHeader(http.StatusNotFound)
			s.render(w, "error", map[string]any{"Title": "No such task", "Nav": "sprint", "Message": "The sprint's plan holds no task " + id + "."})
			return
		}
		s.render(w, "task", map[string]any{"Title": "Task " + id, "Nav": "sprint", "Page": page})
	case "/board":
		s.board(ctx, w, r)
	case "/escalations":
		var es []revision.Escalation
		var err error
		if s.deps.Exec != nil {
			d := s.deps.Revision
			d.Exec = s.deps.Exec
			es, err = d.Escalations(ctx, 0)
		}
		if err != nil {
			s.fail(w, err)
			return
		}
		chart, err := LoadRetro(ctx, s.deps)
		if err != nil {
			s.fail(w, err)
			return
		}
		s.render(w, "escalations", map[string]any{"Title": "Escalations and retro", "Nav": "escalations", "Escalations": es, "Chart": chart})
	case "/records":
		s.records(w, r)
	case "/events":
		s.events(ctx, w)
	default:
		if strings.HasPrefix(r.URL.Path, "/assets/") {
			s.files.ServeHTTP(w, r)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		s.render(w, "error", map[string]any{"Title": "Not found", "Message": "No page at " + r.URL.Path + "."})
	}
}

// BoardColumn is one status of the board page.
type BoardColumn struct {
	Status string
	Items  []board.Row
}

func (s *Server) board(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	if s.deps.Board == nil {
		s.render(w, "error", map[string]any{"Title": "Board", "Nav": "board", "Message": "This repository has no board."})
		return
	}
	var cols []BoardColumn
	for _, st := range []string{"open", "in_progress", "done", "cancelled"} {
		col := BoardColumn{Status: st}
		cursor := ""
		for len(col.Items) < 2000 {
			limit := 500
			page, err := s.deps.Board.List(ctx, board.ListRequest{Filter: board.ListFilter{Status: st}, Limit: &limit, Cursor: cursor, NoSweep: true})
			if err != nil {
				s.fail(w, err)
				return
			}
			col.Items = append(col.Items, page.Items...)
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		cols = append(cols, col)
	}
	s.render(w, "board", map[string]any{"Title": "Board", "Nav": "board", "Columns": cols, "Now": time.Now().UTC().Format(time.RFC3339)})
}

func (s *Server) records(w http.ResponseWriter, r *http.Request) {
	if s.deps.Record == nil {
		s.render(w, "error", map[string]any{"Title": "Record", "Nav": "records", "Message": "This repository has no record."})
		return
	}
	kind, scope := r.URL.Query().Get("kind"), r.URL.Query().Get("scope")
	limit := 500
	page, err := s.deps.Record.ReadPage(record.PageRequest{Filter: record.Filter{Scope: scope}, Limit: &limit, IncludeContent: true})
	if err != nil {
		s.fail(w, err)
		return
	}
	rows := page.Rows[:0:0]
	kinds := map[string]bool{}
	for _, row := range page.Rows {
		kinds[row.Kind] = true
		if kind == "" || row.Kind == kind {
			rows = append(rows, row)
		}
	}
	var ks []string
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	s.render(w, "records", map[string]any{"Title": "Record", "Nav": "records", "Rows": rows, "Kind": kind, "Scope": scope, "Kinds": ks})
}

// events streams "change" whenever the refs under refs/ideate/ (or the
// verdict notes) move, until the client goes away.
func (s *Server) events(ctx context.Context, w http.ResponseWriter) {
	fl, ok := w.(http.Flusher)
	if !ok || s.deps.Refs == nil {
		http.Error(w, "no live stream here", http.StatusNotImplemented)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	last, err := s.deps.Refs(ctx)
	if err != nil {
		http.Error(w, apperr.Message(err), http.StatusInternalServerError)
		return
	}
	fmt.Fprint(w, "retry: 1000\nevent: ready\ndata: {}\n\n")
	fl.Flush()
	t := time.NewTicker(Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := s.deps.Refs(ctx)
		if err != nil || now == last {
			continue
		}
		last = now
		if _, err := fmt.Fprint(w, "event: change\ndata: {}\n\n"); err != nil {
			return
		}
		fl.Flush()
	}
}

func (s *Server) render(w http.ResponseWriter, page string, data map[string]any) {
	var buf bytes.Buffer
	if err := s.pages[page].Execute(&buf, data); err != nil {
		http.Error(w, "cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	w.WriteHeader(http.StatusInternalServerError)
	s.render(w, "error", map[string]any{"Title": "Cannot read the repository", "Message": string(apperr.CodeOf(err)) + ": " + apperr.Message(err)})
}

// Loopback reports whether host ("name:port" or a bare name) is this
// machine only: localhost or a loopback IP.
func Loopback(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// RefsOf fingerprints g's refs under refs/ideate/ and refs/notes/ideate:
// their names and commits, which every write of the tool moves.
func RefsOf(g *gitstore.Store) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		h := sha256.New()
		for _, p := range []string{"refs/ideate/", "refs/notes/"} {
			rs, err := g.Refs(p)
			if err != nil {
				return "", err
			}
			for _, r := range rs {
				fmt.Fprintf(h, "%s %s\n", r.Hash, r.Name)
			}
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
}
