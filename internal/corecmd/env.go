package corecmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/board"
	"github.com/ideate/git-ideate/internal/config"
	"github.com/ideate/git-ideate/internal/execlog"
	"github.com/ideate/git-ideate/internal/gitstore"
	"github.com/ideate/git-ideate/internal/record"
	"github.com/ideate/git-ideate/internal/steering"
	"github.com/ideate/git-ideate/internal/teamsync"
	"github.com/ideate/git-ideate/internal/telemetry"
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

	git   *gitstore.Store
	clone *config.Config // git config ideate.* over the defaults, read with git
	rec   *record.Store
	board *board.Store
	exec  *execlog.Log
	tel   *telemetry.Recorder
	cfg   *config.Config // .ideate.json too, read on first use

	steerMu  sync.Mutex
	steerCfg *gitstore.Config // SteeringNow's git config, read again when it changed
	Session  string           // set by the MCP server and hooks: the host's session

	// Exiting: the process ends when the command returns (main), so Close
	// leaves the packs mapped; the kernel drops the mappings at exit, and
	// unmapping each index and pack first only costs the call time.
	Exiting bool
	// Server: the commands run in one long-lived process (the MCP
	// server), which keeps what it learns of the board in memory.
	Server bool
}

// Now is the clock of every store the commands open; tests replace it.
var Now = time.Now

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
	if err := gc.Err(); err != nil {
		return nil, err
	}
	clone, err := config.LoadGit(gc)
	if err != nil {
		return nil, err
	}
	opt := clone.StoreOptions()
	opt.Config = gc
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
		e.rec.Resolve = func(id string) (bool, error) { return board.Known(g, id) }
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
		e.exec.Now = Now
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
		b.Session = e.Session
		if b.Session == "" {
			b.Session = CLISession(e, "")
		}
		b.Warn = e.Warn
		b.AppendIndex = !e.Server // a call's process leaves what it learned of the board on disk
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

// SteeringNow is Steering with the gate read afresh (.ideate.json, and the
// git configuration when one of its files changed), for the long-lived
// MCP server: a change of the setting takes effect on the next call.
func (e *Env) SteeringNow() (*steering.Store, error) {
	g, err := e.Git()
	if err != nil {
		return nil, err
	}
	e.steerMu.Lock()
	if e.steerCfg == nil {
		e.steerCfg = g.Config()
	}
	if e.steerCfg.Changed() {
		e.steerCfg = gitstore.LoadConfig(g.Repo())
	}
	gc := e.steerCfg
	e.steerMu.Unlock()
	if err := gc.Err(); err != nil {
		return nil, err
	}
	c, err := config.Load(g.Repo().WorkTree, gc)
	if err != nil {
		return nil, err
	}
	return e.openSteering(g, c.SteeringEnabled), nil
}

func (e *Env) openSteering(g *gitstore.Store, enabled bool) *steering.Store {
	s := steering.Open(g, enabled)
	s.Now = Now
	s.Warn = e.Warn
	return s
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
	session := e.Session
	if session == "" {
		session = "cli-" + record.NewIDSource().New(Now())
	}
	r := telemetry.Open(g.Repo().StateDir(), session)
	e.tel = r
	r.Now = func() time.Time { return Now() }
	if e.Err != nil {
		var once sync.Once
		r.Warn = func(msg string) { once.Do(func() { e.Warn(msg) }) }
	}
	return r
}

// Close releases what the commands opened.
func (e *Env) Close() {
	if e.git != nil && !e.Exiting {
		e.git.Close()
	}
}

// warn writes one "warning: …" line on Err.
func (e *Env) Warn(msg string) { fmt.Fprintln(e.Err, "warning: "+msg) }

// WriteJSON writes v as one line of JSON (indented when pretty), HTML
// characters unescaped.
func WriteJSON(w io.Writer, v any, pretty bool) error {
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

// NewBufWriter buffers a listing's many small writes.
func NewBufWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64*1024) }

// IsTerminal reports whether w is a terminal (progress goes only there).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
