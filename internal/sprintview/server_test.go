package sprintview_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
	"github.com/ideate/git-ideate/internal/plan/plantest"
	"github.com/ideate/git-ideate/internal/sprintview"
)

func serve(t *testing.T, d *demo) *httptest.Server {
	t.Helper()
	s, err := sprintview.New(d.deps)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestLoadSprint_StatesFromTheLog(t *testing.T) {
	d := newDemo(t)
	sp, err := sprintview.LoadSprint(context.Background(), d.deps)
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Waves) != 2 || sp.Waves[0].Number != 1 || sp.Waves[1].Number != 2 {
		t.Fatalf("waves = %+v", sp.Waves)
	}
	want := map[string]struct {
		state   string
		attempt int
		class   string
	}{
		"S1-01/T1": {sprintview.StatePass, 2, ""},
		"S1-01/T2": {sprintview.StatePass, 1, ""},
		"S1-02/T1": {sprintview.StateEscalated, 1, d.escalation},
	}
	for id, w := range want {
		tk := sp.Tasks[id]
		if tk == nil || tk.State != w.state || tk.Attempt != w.attempt || tk.Class != w.class {
			t.Errorf("%s = %+v, want %+v", id, tk, w)
		}
	}
	if sp.Waves[0].Ticked != 2 || sp.Waves[1].Ticked != 0 {
		t.Errorf("ticks = %d, %d", sp.Waves[0].Ticked, sp.Waves[1].Ticked)
	}
	if tk := sp.Tasks["S1-01/T1"]; tk.Fails != 1 || tk.Passes != 1 {
		t.Errorf("S1-01/T1 fails/passes = %d/%d", tk.Fails, tk.Passes)
	}
	g := sprintview.Layout(sp)
	found := false
	for _, l := range g.Lines {
		if l.To == "S1-02/T1" {
			found = true
		}
	}
	if !found {
		t.Errorf("no dependency line into S1-02/T1: %+v", g.Lines)
	}
}

func TestServer_PagesEscapeEveryValue(t *testing.T) {
	d := newDemo(t)
	ts := serve(t, d)
	for _, path := range []string{"/", "/task?id=S1-01/T1", "/task?id=S1-02/T1", "/board", "/escalations", "/records", "/records?kind=decision&scope=view"} {
		code, body := get(t, ts.URL+path)
		if code != 200 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
		if strings.Contains(body, "<script>document") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s carries unescaped markup", path)
		}
	}
	_, task := get(t, ts.URL+"/task?id=S1-01/T1")
	for _, want := range []string{"Attempt 1", "Attempt 2", "assert_fail", "fix Reverse for invalid UTF-8", "&lt;script&gt;"} {
		if !strings.Contains(task, want) {
			t.Errorf("task page lacks %q", want)
		}
	}
	_, esc := get(t, ts.URL+"/escalations")
	for _, want := range []string{d.escalation, `data-label="assert_fail"`, `data-label="wave 2"`} {
		if !strings.Contains(esc, want) {
			t.Errorf("escalations page lacks %q", want)
		}
	}
	if code, _ := get(t, ts.URL+"/task?id=S9-99/T9"); code != 404 {
		t.Errorf("unknown task: %d", code)
	}
}

func TestServer_RefusesWritesAndForeignHosts(t *testing.T) {
	d := newDemo(t)
	ts := serve(t, d)
	before := gt.Git(t, d.dir, "for-each-ref")
	resp, err := http.Post(ts.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/", nil)
	req.Host = "evil.example:80"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
	for _, p := range []string{"/", "/board", "/escalations", "/records", "/task?id=S1-01/T1"} {
		get(t, ts.URL+p)
	}
	if after := gt.Git(t, d.dir, "for-each-ref"); after != before {
		t.Errorf("reading the pages moved refs:\n%s\n---\n%s", before, after)
	}
}

func TestServer_EventsSayChangeWhenAVerdictLands(t *testing.T) {
	d := newDemo(t)
	ts := serve(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	next := func() string {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v", err)
			}
			if strings.HasPrefix(line, "event: ") {
				return strings.TrimSpace(strings.TrimPrefix(line, "event: "))
			}
		}
	}
	if ev := next(); ev != "ready" {
		t.Fatalf("first event %q", ev)
	}
	d.log(t, "S1-02/T1", 2, 2, "green", execlog.PASS, "", gt.Git(t, d.dir, "rev-parse", "HEAD"))
	if ev := next(); ev != "change" {
		t.Fatalf("after a verdict: %q", ev)
	}
}

func TestServer_ATaskNeverStartedShowsNoAttempt(t *testing.T) {
	dir := gt.NewRepo(t)
	if err := plantest.CopyExample(dir); err != nil {
		t.Fatal(err)
	}
	gt.Git(t, dir, "add", "-A")
	gt.Git(t, dir, "commit", "-qm", "plan")
	g, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	s, err := sprintview.New(depsOf(g, dir))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	code, body := get(t, ts.URL+"/task?id=S1-01/T1")
	if code != 200 || !strings.Contains(body, "No attempt yet") {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := get(t, ts.URL+"/"); code != 200 || !strings.Contains(body, `data-state="waiting"`) {
		t.Fatalf("%d %s", code, body)
	}
}
