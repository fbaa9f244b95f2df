package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/config"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gates"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/hooks"
	"github.com/ideate/git-ideate/internal/mcpserver"
	"github.com/ideate/git-ideate/internal/plan"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/retro"
	"github.com/ideate/git-ideate/internal/revision"
	"github.com/ideate/git-ideate/internal/steering"
	"github.com/ideate/git-ideate/internal/teamsync"
	"github.com/ideate/git-ideate/internal/telemetry"
	"github.com/ideate/git-ideate/internal/worktree"
)

// Env is what every command runs against: where it was started, its
// standard streams, and the stores it opens on first use. It is the
// composition root: the only place that reads the configuration (through
// package config) and hands its values to the library packages, wires the
// telemetry observers and the remote authority, and writes warnings.
// run binds it with kong, and every command's Run takes it; tests build
// one with buffers.
type Env struct {
	Dir string
	In  io.Reader
	Out io.Writer
	Err io.Writer

	git     *gitstore.Store
	clone   *config.Config // git config ideate.* over the defaults, read with git
	rec     *record.Store
	board   *board.Store
	exec    *execlog.Log
	tel     *telemetry.Recorder
	cfg     *config.Config // .ideate.json too, read on first use
	session string         // set by the MCP server and hooks: the host's session

	// exiting: the process ends when the command returns (main), so Close
	// leaves the packs mapped; the kernel drops the mappings at exit, and
	// unmapping each index and pack first only costs the call time.
	exiting bool
	// spares: the store keeps this many files made ahead of its writes
	// (gitstore.Options.Spares); the MCP server sets it, a CLI call not.
	spares int
	// server: the commands run in one long-lived process (the MCP
	// server), which keeps what it learns of the board in memory.
	server bool
}

// nowFunc is the clock of every store the commands open; tests replace it.
var nowFunc = time.Now

// Git opens the repository containing Dir once, with the store settings of
// its git config (config.LoadGit: a bad ideate.* value is an error naming
// it; .ideate.json is not read here).
func (e *Env) Git() (*gitstore.Store, error) {
	if e.git != nil {
		return e.git, nil
	}
	r, err := gitstore.Discover(e.Dir)
	if err != nil {
		return nil, err
	}
	gc := gitstore.LoadConfig(r)
	clone, err := config.LoadGit(gc)
	if err != nil {
		return nil, err
	}
	opt := clone.StoreOptions()
	opt.Config = gc
	if clone.Spares {
		opt.Spares = e.spares
	}
	opt.WatchRefs = e.server
	e.git, e.clone = gitstore.OpenRepo(r, opt), clone
	return e.git, nil
}

// Config loads the project configuration (.ideate.json at the top of the
// working tree, then git config ideate.*) once.
func (e *Env) Config() (*config.Config, error) {
	if e.cfg != nil {
		return e.cfg, nil
	}
	g, err := e.Git()
	if err != nil {
		return nil, err
	}
	c, err := config.Load(g.Repo().WorkTree, g.Config())
	if err != nil {
		return nil, err
	}
	e.cfg = c
	return c, nil
}

// Remote resolves the remote to talk to: name when given, else
// ideate.remote, else the only remote.
func (e *Env) Remote(name string) (string, error) {
	g, err := e.Git()
	if err != nil {
		return "", err
	}
	return g.ResolveRemote(name, e.clone.Remote)
}

// Record opens the process record once.
func (e *Env) Record() (*record.Store, error) {
	if e.rec == nil {
		g, err := e.Git()
		if err != nil {
			return nil, err
		}
		e.rec = record.Open(g)
		if t := e.Telemetry(); t != nil {
			e.rec.Observer = t
		}
		e.rec.Resolve = func(id string) (bool, error) {
			h, err := g.Ref(board.RefName(id))
			return h != gitstore.ZeroHash, err
		}
	}
	return e.rec, nil
}

// Exec opens the execution log once.
func (e *Env) Exec() (*execlog.Log, error) {
	if e.exec == nil {
		g, err := e.Git()
		if err != nil {
			return nil, err
		}
		e.exec = execlog.Open(g)
		e.exec.Now = nowFunc
	}
	return e.exec, nil
}

// Board opens the delegation board once.
func (e *Env) Board() (*board.Store, error) {
	if e.board == nil {
		rec, err := e.Record()
		if err != nil {
			return nil, err
		}
		b := board.Open(e.git, rec)
		b.Session = e.session
		if b.Session == "" {
			b.Session = cliSession(e, "")
		}
		b.Warn = e.warn
		b.AppendIndex = !e.server // a call's process leaves what it learned of the board on disk
		if t := e.Telemetry(); t != nil {
			b.Observer = t
		}
		e.board = b
	}
	return e.board, nil
}

// AuthBoard is Board with the remote authority of --remote, else of
// ideate.remote, when either names one.
func (e *Env) AuthBoard(remote string) (*board.Store, error) {
	b, err := e.Board()
	if err != nil {
		return nil, err
	}
	if remote == "" {
		remote = e.clone.Remote
	}
	if remote == "" {
		return b, nil
	}
	name, err := e.git.ResolveRemote(remote, "")
	if err != nil {
		return nil, err
	}
	b.Authority = &teamsync.Authority{Git: e.git, Board: b, Remote: name}
	return b, nil
}

// Steering opens the steering store, enabled or gated by the steering
// setting (.ideate.json steering.enabled, git config ideate.steering; off
// unless set true).
func (e *Env) Steering() (*steering.Store, error) {
	g, err := e.Git()
	if err != nil {
		return nil, err
	}
	c, err := e.Config()
	if err != nil {
		return nil, err
	}
	return e.openSteering(g, c.SteeringEnabled), nil
}

// SteeringNow is Steering with the gate read afresh (.ideate.json and git
// config, a few small files), for the long-lived MCP server: a change of
// the setting takes effect on the next call.
func (e *Env) SteeringNow() (*steering.Store, error) {
	g, err := e.Git()
	if err != nil {
		return nil, err
	}
	c, err := config.Load(g.Repo().WorkTree, gitstore.LoadConfig(g.Repo()))
	if err != nil {
		return nil, err
	}
	return e.openSteering(g, c.SteeringEnabled), nil
}

func (e *Env) openSteering(g *gitstore.Store, enabled bool) *steering.Store {
	s := steering.Open(g, enabled)
	s.Now = nowFunc
	s.Warn = e.warn
	return s
}

// Backend opens the stores the MCP tools use, for this environment.
func (e *Env) Backend(session string) (*mcpserver.Backend, error) {
	// With ideate.remote set, the claim-lifecycle tools are
	// remote-authoritative, as the CLI verbs are.
	b, err := e.AuthBoard("")
	if err != nil {
		return nil, err
	}
	// Steering's gate is read again on every steering call, so turning it
	// on or off takes effect without a restart; a broken .ideate.json
	// only affects the tools that read it.
	g, err := e.Git()
	if err != nil {
		return nil, err
	}
	b.Session = session
	x, err := e.Exec()
	if err != nil {
		return nil, err
	}
	return &mcpserver.Backend{Record: e.rec, Board: b, Steering: e.SteeringNow, Session: session, Git: g, Exec: x,
		Gates: func() (*gates.Registry, gates.VerdictLog, error) { return e.Gates(planFlags{}) },
		TaskDeps: func() (gates.Deps, error) {
			d, _, err := e.gateDeps(planFlags{})
			return d, err
		},
		Plan:     func(ctx context.Context, n int) (*plan.Sprint, error) { return loadPlan(ctx, e, planFlags{Sprint: n}) },
		Revision: func() (revision.Deps, error) { return e.Revision(planFlags{}) }}, nil
}

// HookStores opens the stores a hook handler uses, in the repository
// containing dir, for the host's session (when it names one).
func (e *Env) HookStores(dir, session string) (*hooks.Stores, error) {
	e.Dir = dir
	if session != "" {
		e.session = session
	}
	rec, err := e.Record()
	if err != nil {
		return nil, err
	}
	b, err := e.Board()
	if err != nil {
		return nil, err
	}
	st := &hooks.Stores{Record: rec, Board: b}
	if t := e.Telemetry(); t != nil {
		st.Primed = t.PrimingRequested
	}
	// The execution gates: task contracts, the state directory, and the
	// standards of the plan in the main working tree (a sub-agent's
	// directory is its task's worktree).
	tasks := worktree.Open(e.git)
	tasks.Now = nowFunc
	st.Tasks, st.StateDir, st.Top = tasks, e.git.Repo().StateDir(), e.git.Repo().WorkTree
	if cd := e.git.Repo().CommonDir; filepath.Base(cd) == ".git" {
		st.Top = filepath.Dir(cd)
	}
	// A green-worker's frozen files: what the newest red PASS judged.
	st.Git = e.git
	st.RedCommit = func(ctx context.Context, task string) (string, bool, error) {
		_, log, err := e.Gates(planFlags{})
		if err != nil {
			return "", false, err
		}
		return log.LatestPass(ctx, task, "red")
	}
	st.CaptureOutput = func(ctx context.Context, task string) (bool, error) {
		return revision.Deps{Tasks: tasks}.CaptureOutput(ctx, task)
	}
	st.Escalations = func(ctx context.Context, n int) ([]string, error) {
		d, err := e.Revision(planFlags{})
		if err != nil {
			return nil, err
		}
		return d.PrimeLines(ctx, n)
	}
	st.Retro = func(ctx context.Context) (*retro.Report, error) {
		log, err := e.Exec()
		if err != nil {
			return nil, err
		}
		// Priming reads at most the newest 2000 records for conflicts.
		rep, err := retro.Load(ctx, retro.Sources{Exec: log, Record: rec, RecordScan: 2000}, retro.LastPlanning)
		return &rep, err
	}
	st.Standards = func(ctx context.Context) (*plan.Standards, error) {
		s, err := plan.LoadDir(ctx, st.Top, plan.Options{})
		if err != nil {
			return nil, err
		}
		return s.Standards, nil
	}
	return st, nil
}

// Telemetry returns a recorder for this clone's state directory, for the
// session "cli-<ULID>" (every CLI call is a session), or nil when Dir is
// not in a repository. Dropped events are reported once on Err. The
// recorder is made once per Env.
func (e *Env) Telemetry() *telemetry.Recorder {
	if e.tel != nil {
		return e.tel
	}
	g, err := e.Git()
	if err != nil {
		return nil
	}
	session := e.session
	if session == "" {
		session = "cli-" + record.NewIDSource().New(nowFunc())
	}
	r := telemetry.Open(g.Repo().StateDir(), session)
	e.tel = r
	r.Now = func() time.Time { return nowFunc() }
	if e.Err != nil {
		var once sync.Once
		r.Warn = func(msg string) { once.Do(func() { e.warn(msg) }) }
	}
	return r
}

// Close releases what the commands opened.
func (e *Env) Close() {
	if e.git != nil && !e.exiting {
		e.git.Close()
	} else if e.git != nil {
		e.git.DropSpares()
	}
}

// warn writes one "warning: …" line on Err.
func (e *Env) warn(msg string) { fmt.Fprintln(e.Err, "warning: "+msg) }

// writeJSON writes v as one line of JSON (indented when pretty), HTML
// characters unescaped.
func writeJSON(w io.Writer, v any, pretty bool) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// newBufWriter buffers a listing's many small writes.
func newBufWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64*1024) }

// isTerminal reports whether w is a terminal (progress goes only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
