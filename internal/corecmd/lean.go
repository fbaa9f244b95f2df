package corecmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/ideate/git-ideate/internal/apperr"
	tree "github.com/ideate/git-ideate/internal/version"
)

// Lean is the part of the command tree that the git-ideate binary runs
// itself: the record and board commands agents and scripts call many
// times a session, and steering and telemetry, which need nothing more. Every other command line, and every line FastParse does
// not take (help, a bad flag, a positional argument), goes to the full
// binary, git-ideate-full, which the lean one replaces itself with
// (ExecFull). The lean binary links neither kong nor the gates, so it
// starts as a small static Go program does (issue 19: start-up was a
// third of a CLI claim). Each leaf here is the full tree's own type at the
// same path (TestLean_SameLeavesAsFull), so a line means the same in both.
type Lean struct {
	Record    LeanRecord   `cmd:""`
	Work      WorkCmd      `cmd:""`
	Steering  SteeringCmd  `cmd:""`
	Telemetry TelemetryCmd `cmd:""`
}

// LeanRecord is the record group of Lean: every record command but
// session-end, which reads a hook payload with the hooks package.
type LeanRecord struct {
	Append   RecordAppendCmd   `cmd:""`
	Decision RecordDecisionCmd `cmd:""`
	Read     RecordReadCmd     `cmd:""`
	Prime    RecordPrimeCmd    `cmd:""`
	Export   RecordExportCmd   `cmd:""`
}

// FullName is the full binary's name: every command, the MCP server and
// the hook handler.
const FullName = "git-ideate-full"

// NotInstalled: the lean git-ideate binary was asked for a command only
// the full binary runs, and there is none beside it or on PATH.
const NotInstalled apperr.Code = "NOT_INSTALLED"

// FullBinary finds git-ideate-full: beside this executable (symbolic
// links resolved; go install and the release archives put the two in one
// directory), else on PATH.
func FullBinary() (string, error) {
	name := FullName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), name)
		// Windows has no execute bits (os.Stat reports none): there the
		// .exe name is what makes the file runnable.
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (fi.Mode()&0o111 != 0 || runtime.GOOS == "windows") {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", apperr.New(NotInstalled, "this command needs %s, which is neither beside git-ideate nor on PATH; `go install github.com/ideate/git-ideate/cmd/...@v%s` installs both binaries", FullName, tree.Version)
}
