package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/ideate/git-ideate/internal/corecmd"
	"os"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
)

func TestExitStatus_OneStatusPerClass(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{apperr.New(apperr.Schema, "bad"), 1},
		{apperr.New(apperr.NotFound, "gone"), 1},
		{fmt.Errorf("wrapped: %w", apperr.New(apperr.Conflict, "lost")), 1},
		{apperr.New(apperr.GateFail, "2 tests still pass"), 3},
		{fmt.Errorf("gate red: %w", apperr.New(apperr.GateFail, "x")), 3},
		{apperr.New(apperr.Unverifiable, "unknown runner output"), 4},
		{apperr.New(apperr.Internal, "boom"), 5},
		{errors.New("an untyped error"), 5},
		{fmt.Errorf("push: %w", context.Canceled), 130},
	}
	for _, c := range cases {
		if got := corecmd.ExitStatus(c.err); got != c.want {
			t.Errorf("exitStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	seen := map[int]string{}
	for _, e := range corecmd.ExitStatuses {
		if prev, dup := seen[e.Status]; dup {
			t.Errorf("status %d means both %q and %q", e.Status, prev, e.Meaning)
		}
		seen[e.Status] = e.Meaning
	}
	for _, s := range []int{corecmd.ExitOK, corecmd.ExitFailure, corecmd.ExitUsage, corecmd.ExitGateFail, corecmd.ExitUnverifiable, corecmd.ExitInternal, corecmd.ExitInterrupted} {
		if _, ok := seen[s]; !ok {
			t.Errorf("status %d is not in the --help table", s)
		}
	}
}

// --help and README.md list the same statuses with the same words.
func TestExitStatus_ListedInHelpAndReadme(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, "", "--help")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range corecmd.ExitStatuses {
		if line := fmt.Sprintf("%d  %s", e.Status, e.Meaning); !strings.Contains(r.out, line) {
			t.Errorf("--help lacks %q:\n%s", line, r.out)
		}
		if row := fmt.Sprintf("| %d | %s |", e.Status, e.Meaning); !strings.Contains(string(readme), row) {
			t.Errorf("README.md lacks the row %q", row)
		}
	}
}

// Through the binary: a typed failure exits 1, a malformed command line
// exits 1 (the reference contract's status), a hook path exits 0.
func TestExitStatus_ThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	if r := bin(t, dir, "", "record", "read"); r.code != corecmd.ExitFailure || !strings.Contains(r.err, "NOT_A_REPOSITORY") {
		t.Errorf("record read outside a repository: exit %d, stderr %q", r.code, r.err)
	}
	if r := bin(t, dir, "", "record", "read", "--no-such-flag"); r.code != corecmd.ExitUsage || !strings.Contains(r.err, "SCHEMA") {
		t.Errorf("unknown flag: exit %d, stderr %q", r.code, r.err)
	}
	if r := bin(t, dir, "", "hook", "--no-such-flag"); r.code != corecmd.ExitOK {
		t.Errorf("hook with a bad flag: exit %d, stderr %q", r.code, r.err)
	}
}
