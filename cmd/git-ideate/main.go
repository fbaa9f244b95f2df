// Command git-ideate is git ideate: a process record, a delegation board
// and an execution discipline for coding agents, stored in refs/ideate/*
// of the repository. Installed on PATH as git-ideate, it runs as
// `git ideate …`.
//
// This binary is the lean front: it answers --version and runs the
// record, board, steering and telemetry command lines it can parse
// without kong (corecmd.Lean); it replaces itself with git-ideate-full,
// installed beside it, for every other line. Its package list is small and has no cgo, so a call starts
// in about the time a hello-world Go program does (issue 19).
package main

import (
	"os"
	"reflect"

	"github.com/ideate/git-ideate/internal/corecmd"
)

func main() {
	args := os.Args[1:]
	if corecmd.VersionOnly(args) {
		os.Stdout.WriteString(corecmd.VersionString() + "\n")
		os.Exit(corecmd.ExitOK)
	}
	cmd, path, chdir, ok := corecmd.FastParse(reflect.TypeOf(corecmd.Lean{}), args)
	if !ok {
		os.Exit(runFull(args))
	}
	ctx, sig := corecmd.StartProcess()
	env := &corecmd.Env{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Exiting: true}
	code := corecmd.RunParsed(ctx, env, cmd, path, chdir)
	env.Close()
	sig.Close()
	os.Exit(code)
}

// runFull runs the full binary with args and returns the status to exit
// with when it could not: where the system can, the process becomes the
// full binary (execFull does not return then).
func runFull(args []string) int {
	full, err := corecmd.FullBinary()
	if err == nil {
		err = execFull(full, args)
	}
	os.Stderr.WriteString("git ideate: " + corecmd.FormatError(err) + "\n")
	if corecmd.HookLine(args) {
		return corecmd.ExitOK // a hook never fails its host
	}
	return corecmd.ExitStatus(err)
}
