package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/confine"
	"github.com/ideate/git-ideate/internal/corecmd"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/shell"
)

// The hidden confine entry runs a bound worker's Bash command held to
// its role (package confine). The PreToolUse hook rewrites the command
// of a bound execution agent's Bash call to
//
//	git-ideate confine --task T --role R --agent A -- 'COMMAND'
//
// which reads the agent's binding, runs COMMAND under
//
//	git-ideate confine --enter --rw DIR… -- bash -c COMMAND
//
// (the process that restricts itself and becomes bash), undoes what the
// role may not change, and logs what the command changed as the agent's
// writes for the other agents' checks after the fact. It is parsed
// here, before the command tree, so that the command's own exit status
// comes back unchanged.

// runConfine runs the confine entry with args (after "confine") and
// returns the exit status.
func runConfine(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	var task, role, agent string
	var rw []string
	enter := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		name, val, has := strings.Cut(a, "=")
		if name == "--enter" {
			enter = true
			continue
		}
		if !has {
			if i+1 >= len(args) {
				return confineFail(errw, apperr.New(apperr.Schema, "%s needs a value", a))
			}
			i++
			val = args[i]
		}
		switch name {
		case "--task":
			task = val
		case "--role":
			role = val
		case "--agent":
			agent = val
		case "--rw":
			rw = append(rw, val)
		default:
			return confineFail(errw, apperr.New(apperr.Schema, "unknown flag %s", name))
		}
	}
	rest := args[i:]
	if enter {
		return confineFail(errw, confine.Enter(rw, rest))
	}
	if task == "" || role == "" || agent == "" || len(rest) != 1 {
		return confineFail(errw, apperr.New(apperr.Schema, "usage: git ideate confine --task T --role R --agent A -- 'COMMAND'"))
	}
	cwd, err := os.Getwd()
	if err != nil {
		return confineFail(errw, apperr.Wrap(apperr.Internal, err, "no working directory"))
	}
	repo, err := gitstore.Discover(cwd)
	if err != nil {
		return confineFail(errw, err)
	}
	state := repo.StateDir()
	b, err := hooks.ReadBinding(state, agent)
	if err != nil {
		return confineFail(errw, err)
	}
	if b.Task != task || b.Role != role {
		return confineFail(errw, apperr.New(apperr.Schema, "agent %s is bound as the %s of task %s, not the %s of task %s", agent, b.Role, b.Task, role, task))
	}
	exe, err := os.Executable()
	if err != nil {
		return confineFail(errw, apperr.Wrap(apperr.Internal, err, "cannot name this binary"))
	}
	spec := confine.Spec{
		Worktree: b.Worktree, Dir: cwd, Role: role, TestGlobs: b.TestGlobs, ShimMarker: b.ShimMarker, Frozen: b.Frozen,
		Extensions: b.Extensions,
		StateDir:   filepath.Join(state, "confine", strings.ReplaceAll(task, "/", "+")),
		CacheDir:   filepath.Join(state, "confine", "cache"),
		Enter:      []string{exe, "confine", "--enter"},
		GitDir:     repo.CommonDir,
	}
	// What the command changes is logged as the agent's writes, for the
	// other agents' checks after the fact (hooks/ledger.go); the marker
	// says so meanwhile, and stays if this entry is killed.
	mark, merr := hooks.BeginUnlogged(state, agent, b.Worktree)
	res, err := confine.Run(ctx, spec, rest[0], in, out, errw)
	if lerr := hooks.LogWrites(state, agent, b.Worktree, res.Changed); lerr != nil || merr != nil || res.Unlisted != nil {
		fmt.Fprintf(errw, "git ideate confine: what the command changed is not logged (%v): another worker's stop will be blamed for it\n", errors.Join(lerr, merr, res.Unlisted))
	} else if err == nil {
		os.Remove(mark) // else what it changed may be unlogged: the marker stays
	}
	if len(res.Refused) > 0 {
		logRefusal(ctx, cwd, errw, b, res.Refused)
	}
	if err != nil {
		fmt.Fprintf(errw, "git ideate confine: %s\n", corecmd.FormatError(err))
		if res.Code <= 0 {
			return corecmd.ExitStatus(err)
		}
	}
	return res.Code
}

// logRefusal writes what confinement put back to the execution log
// (phase "confine", event "refused", the role and the paths; never the
// command, which may hold a secret), so a reviewer sees what a worker
// tried and retro can count it. A failed write is a warning.
func logRefusal(ctx context.Context, dir string, errw io.Writer, b *hooks.Binding, refused []string) {
	if len(refused) > 50 {
		refused = append(refused[:50:50], fmt.Sprintf("and %d more", len(refused)-50))
	}
	env := &Env{Dir: dir, Err: errw}
	defer env.Close()
	x, err := env.Exec()
	if err == nil {
		_, err = x.Append(ctx, execlog.Entry{Actor: "git-ideate confine", Task: b.Task, Phase: "confine", Event: "refused",
			Reasons: []execlog.Reason{{Class: "confine_refused", Detail: "a " + b.Role + "'s Bash call changed what its role may not; it was put back"}},
			Paths:   refused})
	}
	if err != nil {
		fmt.Fprintf(errw, "git ideate confine: the refusal could not be logged: %s\n", corecmd.FormatError(err))
	}
}

func confineFail(errw io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(errw, "git ideate confine: %s\n", corecmd.FormatError(err))
	return corecmd.ExitStatus(err)
}

// confineCommand is the command line that runs command confined for a
// bound execution agent, "" when this system has no confinement or
// IDEATE_CONFINE=0 turns it off (then the guard reads commands: the
// weaker mode).
func confineCommand(task, role, agent, command string) string {
	if !confine.Available() || os.Getenv("IDEATE_CONFINE") == "0" {
		return ""
	}
	exe, err := os.Executable()
	if err != nil || strings.HasSuffix(filepath.Base(exe), ".test") {
		return ""
	}
	return shell.Quote(exe) + " confine --task " + shell.Quote(task) + " --role " + shell.Quote(role) +
		" --agent " + shell.Quote(agent) + " -- " + shell.Quote(command)
}

// DoctorCmd says how this system holds a bound worker's commands.
type DoctorCmd struct {
	JSON bool `help:"Print one JSON object."`
}

// doctorOut is what doctor prints with --json.
type doctorOut struct {
	MessageType string `json:"message_type"`
	Confinement string `json:"confinement"` // "landlock ABI n", "sandbox-exec …", or "none: …"
	Confined    bool   `json:"confined"`    // bound workers' Bash calls run confined
	Mode        string `json:"mode"`        // "confined" or "parser (weaker)"
}

// Run prints the confinement in force: confined, or the guard's reading
// of commands (the weaker mode) and why.
func (c *DoctorCmd) Run(env *Env) error {
	o := doctorOut{MessageType: "doctor", Confinement: confine.Mode(), Confined: confine.Available(), Mode: "confined"}
	why := ""
	if os.Getenv("IDEATE_CONFINE") == "0" {
		o.Confined, why = false, " (IDEATE_CONFINE=0 turns it off)"
	}
	if !o.Confined {
		o.Mode = "parser (weaker)"
	}
	if c.JSON {
		return corecmd.WriteJSON(env.Out, o, true)
	}
	if o.Confined {
		fmt.Fprintf(env.Out, "confinement: %s\nmode: confined: a bound worker's Bash calls run under it (git ideate confine), held to the task's worktree and the role's files\n", o.Confinement)
		return nil
	}
	fmt.Fprintf(env.Out, "confinement: %s%s\nmode: parser, the weaker mode: the guard reads each Bash call of a bound worker and denies what it cannot tell\n", o.Confinement, why)
	return nil
}
