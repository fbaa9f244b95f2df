package main

import (
	"github.com/ideate/git-ideate/internal/corecmd"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/testrun"
)

// TestCmd groups the commands over test runs.
type TestCmd struct {
	Classify TestClassifyCmd `cmd:"" help:"Read a test runner's output on stdin and print one outcome per test as JSON."`
	Run      TestRunCmd      `cmd:"" help:"Run a task's declared tests in its worktree with standards.md's runner; print one outcome per test as JSON and record the run on the task's ref when the worktree is committed."`
}

// TestClassifyCmd classifies a runner's output read from stdin.
type TestClassifyCmd struct {
	Format     string   `help:"Output format: go-test-json, junit-xml, jest-json." placeholder:"F"`
	Dialect    string   `help:"Producer of the output (junit-xml needs one): pytest (or pytest-plugin), vitest, jest-junit, gotestsum, cargo-nextest (or nextest), cargo-test (or libtest), surefire (or maven-surefire); jest-json takes jest or vitest." placeholder:"D"`
	Declared   []string `sep:"none" help:"A test id the run must account for (repeatable, one id per flag, so a parametrised id such as test_add[1, 2] keeps its commas); each gets exactly one outcome (NOT_RUN when the output never names it)." placeholder:"ID"`
	StubMarker []string `name:"stub-marker" help:"Text that makes a failure FAIL_STUB (repeatable; default SUB-AGENT-TODO)." placeholder:"M"`
	Root       string   `help:"Prefix cut from absolute file paths in the results." placeholder:"DIR"`
	JSON       bool     `name:"json" help:"Accepted for symmetry: the report is always JSON."`
	TimedOut   bool     `name:"timed-out" help:"The run was killed at its deadline: tests still running, or never reported, are TIMEOUT."`
}

// Run prints the report; an output that cannot be read in the declared
// format is an UNVERIFIABLE error after the report is printed.
func (c *TestClassifyCmd) Run(env *Env) error {
	top := ""
	if g, err := env.Git(); err == nil {
		top = g.Repo().WorkTree // a plan's Go ids are matched against go.mod's module there
	}
	rep, err := gates.Classify(env.In, testrun.Options{
		Format:      testrun.Format(c.Format),
		Dialect:     testrun.Dialect(c.Dialect),
		Declared:    c.Declared,
		StubMarkers: c.StubMarker,
		Root:        c.Root,
		TimedOut:    c.TimedOut,
	}, top)
	if werr := corecmd.WriteJSON(env.Out, rep, true); werr != nil {
		return werr
	}
	return err
}
