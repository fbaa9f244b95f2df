//go:build linux

package fsmonitor_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ideate/git-ideate/internal/fsmonitor"
)

type served struct {
	root, state string
	done        chan error
}

// serve runs a monitor of a fresh tree in this process until the test ends.
func serve(t *testing.T, o fsmonitor.Options) *served {
	t.Helper()
	s := &served{root: t.TempDir(), state: filepath.Join(t.TempDir(), "state"), done: make(chan error, 1)}
	if err := os.MkdirAll(filepath.Join(s.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	o.Root, o.StateDir, o.Key, o.Skip = s.root, s.state, "K", []string{".git"}
	if o.Seed == nil {
		o.Seed = func(context.Context) ([]string, error) { return []string{"seeded"}, nil }
	}
	ready := make(chan struct{})
	o.Ready = func() { close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	go func() { s.done <- fsmonitor.Serve(ctx, o) }()
	t.Cleanup(func() { cancel(); <-s.done; s.done <- nil })
	select {
	case <-ready:
	case err := <-s.done:
		t.Fatalf("Serve: %v", err)
	}
	return s
}

func (s *served) query(t *testing.T) []string {
	t.Helper()
	ps, err := fsmonitor.Query(context.Background(), s.state, s.root, "K", 2*time.Second)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	return ps
}

func (s *served) ended(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the monitor did not end")
		return nil
	}
}

func run(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}

func TestServe_Query_NamesWhatEventsTouched(t *testing.T) {
	s := serve(t, fsmonitor.Options{})
	if got := s.query(t); !slices.Equal(got, []string{"seeded"}) {
		t.Fatalf("fresh: %v", got)
	}
	run(t, func() error { return os.WriteFile(filepath.Join(s.root, "f.txt"), []byte("x"), 0o644) })
	run(t, func() error { return os.MkdirAll(filepath.Join(s.root, "a/b/c"), 0o755) })
	run(t, func() error { return os.WriteFile(filepath.Join(s.root, "a/b/c/f"), nil, 0o644) })
	run(t, func() error { return os.WriteFile(filepath.Join(s.root, ".git/index"), nil, 0o644) })
	got := s.query(t)
	for _, want := range []string{"seeded", "f.txt", "a"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q missing from %v", want, got)
		}
	}
	if slices.Contains(got, ".git/index") || slices.Contains(got, ".git") {
		t.Errorf("the skipped .git is reported: %v", got)
	}
	// A directory moved: both names; a write inside it after the move,
	// under the new name.
	run(t, func() error { return os.Rename(filepath.Join(s.root, "a"), filepath.Join(s.root, "z")) })
	run(t, func() error { return os.WriteFile(filepath.Join(s.root, "z/b/c/later"), nil, 0o644) })
	got = s.query(t)
	for _, want := range []string{"a", "z", "z/b/c/later"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q missing from %v", want, got)
		}
	}
}

func TestServe_SecondMonitorIsErrRunning(t *testing.T) {
	s := serve(t, fsmonitor.Options{})
	err := fsmonitor.Serve(context.Background(), fsmonitor.Options{Root: s.root, StateDir: s.state, Key: "K",
		Seed: func(context.Context) ([]string, error) { return nil, nil }})
	if !errors.Is(err, fsmonitor.ErrRunning) {
		t.Fatalf("second Serve: %v", err)
	}
	s.query(t)
}

func TestServe_StopAndRemovalEndIt(t *testing.T) {
	s := serve(t, fsmonitor.Options{})
	run(t, func() error { return fsmonitor.Stop(context.Background(), s.state, time.Second) })
	if err := s.ended(t); err != nil {
		t.Errorf("after Stop: %v", err)
	}
	if _, err := fsmonitor.Query(context.Background(), s.state, s.root, "K", time.Second); !errors.Is(err, fsmonitor.ErrUnavailable) {
		t.Errorf("a query after Stop: %v", err)
	}
	s = serve(t, fsmonitor.Options{})
	run(t, func() error { return os.RemoveAll(s.root) })
	if err := s.ended(t); err != nil {
		t.Errorf("after the tree's removal: %v", err)
	}
}

func TestServe_RefusesOtherKeyAndOverflows(t *testing.T) {
	s := serve(t, fsmonitor.Options{QueueLimit: 5})
	if _, err := fsmonitor.Query(context.Background(), s.state, s.root, "other", time.Second); !errors.Is(err, fsmonitor.ErrUnavailable) {
		t.Errorf("a query against another key: %v", err)
	}
	// Another tree at the path the monitor watched (removed, made again).
	if _, err := fsmonitor.Query(context.Background(), s.state, t.TempDir(), "K", time.Second); !errors.Is(err, fsmonitor.ErrUnavailable) {
		t.Errorf("a query about another tree: %v", err)
	}
	for i := 0; i < 10; i++ {
		run(t, func() error { return os.WriteFile(filepath.Join(s.root, "f"), []byte{byte(i)}, 0o644) })
		run(t, func() error { return os.Remove(filepath.Join(s.root, "f")) })
	}
	if _, err := fsmonitor.Query(context.Background(), s.state, s.root, "K", time.Second); !errors.Is(err, fsmonitor.ErrUnavailable) {
		t.Errorf("a query after an overflow: %v", err)
	}
	if err := s.ended(t); err == nil {
		t.Error("an overflow ended the monitor without an error")
	}
}

func TestServe_ExtraChangeReseeds(t *testing.T) {
	extra := t.TempDir()
	seeds := 0
	s := serve(t, fsmonitor.Options{
		Seed: func(context.Context) ([]string, error) {
			seeds++
			return []string{"seed" + string(rune('0'+seeds))}, nil
		},
		Extras: []fsmonitor.Extra{{Dir: extra, Names: []string{"config"},
			OnChange: func(context.Context, string) ([]string, bool, error) { return nil, true, nil }}},
	})
	run(t, func() error { return os.WriteFile(filepath.Join(s.root, "x"), nil, 0o644) })
	run(t, func() error { return os.WriteFile(filepath.Join(extra, "other"), nil, 0o644) })
	if got := s.query(t); !slices.Equal(got, []string{"seed1", "x"}) {
		t.Fatalf("before the reseed: %v", got)
	}
	run(t, func() error { return os.WriteFile(filepath.Join(extra, "config"), nil, 0o644) })
	// (Created, then closed after writing: one seed or two.)
	if got := s.query(t); len(got) != 1 || got[0] == "seed1" {
		t.Fatalf("after the reseed: %v, want only a later seed", got)
	}
}

// A scan that fails for a moment (a file written while it was read) is
// tried again: the monitor serves, and a seed that keeps failing still
// ends it with the error.
func TestServe_SeedRetriedAfterAPassingFailure(t *testing.T) {
	tries := 0
	s := serve(t, fsmonitor.Options{Seed: func(context.Context) ([]string, error) {
		tries++
		if tries < 3 {
			return nil, errors.New("x changed size while being read")
		}
		return []string{"seeded"}, nil
	}})
	if got := s.query(t); !slices.Equal(got, []string{"seeded"}) || tries != 3 {
		t.Fatalf("after two failed scans: %v, %d tries", got, tries)
	}

	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	o := fsmonitor.Options{Root: root, StateDir: filepath.Join(t.TempDir(), "state"), Key: "K", Skip: []string{".git"},
		Seed: func(context.Context) ([]string, error) { return nil, errors.New("broken for good") }}
	if err := fsmonitor.Serve(context.Background(), o); err == nil || !strings.Contains(err.Error(), "broken for good") {
		t.Fatalf("a seed that always fails: %v", err)
	}
}
