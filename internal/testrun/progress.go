package testrun

import (
	"context"
	"strings"
)

// ProgressFunc hears how a run goes: running names the command that has
// just started (empty when only the count changed), tests how many tests
// of that command have finished (go-test-json streams them; a report
// file is read at the end). It is called from the run's goroutines, one
// call at a time per command.
type ProgressFunc func(running string, tests int)

type progressKey struct{}

// WithProgress returns ctx carrying f: the runs started under it report
// to f.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// started reports argv's start to ctx's ProgressFunc and returns what
// counts its finished tests (nil when no one listens).
func started(ctx context.Context, argv []string) func() {
	f, _ := ctx.Value(progressKey{}).(ProgressFunc)
	if f == nil {
		return nil
	}
	f(strings.Join(argv[:min(len(argv), 2)], " "), 0)
	n := 0
	return func() { n++; f("", n) }
}
