package sprintview_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	gt "github.com/ideate/git-ideate/internal/gitstore/gitstoretest"
)

// browser starts a headless Chromium (CHROMIUM names it, else chromium or
// chromium-browser on PATH) or skips, saying why.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				bin = p
				break
			}
		}
	}
	if bin == "" {
		t.Skip("no Chromium on PATH (apt-get install chromium, or set CHROMIUM): the real-browser tests of the sprint view skip")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("user-data-dir", t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("Chromium at %s does not start: %v", bin, err)
	}
	return ctx
}

func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the %s view: %s (%d bytes)", name, p, len(png))
}

// eval runs a script in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// open navigates and waits for sel to be visible.
func open(t *testing.T, ctx context.Context, url, sel string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
}

func TestBrowser_SprintViews(t *testing.T) {
	d := newDemo(t)
	ts := serve(t, d)
	ctx := browser(t)

	open(t, ctx, ts.URL+"/", "svg.graph")
	states := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('.wave a.task')].map(a => [a.dataset.task, a.dataset.state + '|' + a.closest('.wave').dataset.wave + '|' + a.querySelector('.state').textContent]))`)
	waves := eval[[]string](t, ctx, `[...document.querySelectorAll('.wave h2')].map(h => h.textContent)`)
	shot(t, ctx, "sprint")
	want := map[string]string{"S1-01/T1": "pass|1|", "S1-01/T2": "pass|1|", "S1-02/T1": "escalated|2|"}
	for id, w := range want {
		if !strings.HasPrefix(states[id], w) {
			t.Errorf("%s drawn as %q, want %q…", id, states[id], w)
		}
	}
	if !strings.Contains(states["S1-02/T1"], d.escalation) || !strings.Contains(states["S1-01/T1"], "attempt 2") {
		t.Errorf("states lack the class or attempt: %v", states)
	}
	if len(waves) != 2 || !strings.Contains(waves[0], "2/2 ticked") || !strings.Contains(waves[1], "0/1 ticked") {
		t.Errorf("wave headings %q", waves)
	}

	open(t, ctx, ts.URL+"/task?id=S1-01/T1", "table.verdicts")
	attempts := eval[[]string](t, ctx, `[...document.querySelectorAll('.attempt h3')].map(h => h.textContent)`)
	verdicts := eval[int](t, ctx, `document.querySelectorAll('table.verdicts tbody tr').length`)
	shot(t, ctx, "task")
	if len(attempts) != 2 || verdicts != 3 {
		t.Errorf("task page: attempts %q, %d verdict rows", attempts, verdicts)
	}

	open(t, ctx, ts.URL+"/escalations", "#by-class")
	bars := eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll('.bar')].map(b => [b.closest('figure').id + ':' + b.dataset.label, b.dataset.count]))`)
	escalated := eval[[]string](t, ctx, `[...document.querySelectorAll('.escalation')].map(e => e.dataset.task + ' ' + e.querySelector('.badge').textContent)`)
	shot(t, ctx, "escalations")
	if bars["by-class:assert_fail"] != "2" || bars["by-class:escalated: "+d.escalation] != "1" || bars["by-class:decision"] != "" ||
		bars["by-wave:wave 1"] != "1" || bars["by-wave:wave 2"] != "2" {
		t.Errorf("retro chart bars %v", bars)
	}
	if len(escalated) != 1 || escalated[0] != "S1-02/T1 "+d.escalation {
		t.Errorf("escalations %q", escalated)
	}

	open(t, ctx, ts.URL+"/board", ".board")
	cols := eval[map[string]int](t, ctx, `Object.fromEntries([...document.querySelectorAll('.column')].map(c => [c.dataset.status, c.querySelectorAll('.item').length]))`)
	shot(t, ctx, "board")
	if len(cols) != 4 {
		t.Errorf("board columns %v", cols)
	}
}

func TestBrowser_RecordMarkupExecutesNothing(t *testing.T) {
	d := newDemo(t)
	ts := serve(t, d)
	ctx := browser(t)
	open(t, ctx, ts.URL+"/records", ".record")
	// time for an injected onerror to fire, were there one
	if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	title := eval[string](t, ctx, `document.title`)
	shown := eval[bool](t, ctx, `[...document.querySelectorAll('.record h3')].some(h => h.textContent.includes('<script>document.title'))`)
	imgs := eval[int](t, ctx, `document.querySelectorAll('main img, main script').length`)
	shot(t, ctx, "records")
	if strings.Contains(title, "pwned") || imgs != 0 {
		t.Fatalf("markup from a record ran: title %q, %d img/script elements in main", title, imgs)
	}
	if !shown {
		t.Error("the record's markup is not shown as text")
	}
	open(t, ctx, ts.URL+"/task?id=S1-02/T1", ".attempt")
	if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	title = eval[string](t, ctx, `document.title`)
	imgs = eval[int](t, ctx, `document.querySelectorAll('main img, main script').length`)
	if strings.Contains(title, "pwned") || imgs != 0 {
		t.Fatalf("markup from an attempt file ran: title %q, %d elements", title, imgs)
	}
}

func TestBrowser_NewVerdictAppearsWithoutReload(t *testing.T) {
	d := newDemo(t)
	ts := serve(t, d)
	ctx := browser(t)
	open(t, ctx, ts.URL+"/", "svg.graph")
	eval[bool](t, ctx, `window.__sameDocument = true`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('live').textContent.includes('live')`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("live stream not connected: %v", err)
	}
	d.log(t, "S1-02/T1", 2, 2, "green", "PASS", "", gt.Git(t, d.dir, "rev-parse", "HEAD"))
	start := time.Now()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('a.task[data-task="S1-02/T1"]').dataset.state === 'pass'`,
		chromedp.WithPollingTimeout(2*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("the new verdict did not appear within 2 s: %v", err)
	}
	same := eval[bool](t, ctx, `window.__sameDocument === true`)
	if !same {
		t.Fatal("the page was reloaded")
	}
	t.Logf("new verdict shown %v after it was written", time.Since(start).Round(10*time.Millisecond))
	shot(t, ctx, "sprint-after-verdict")
}
