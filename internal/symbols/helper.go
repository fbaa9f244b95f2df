package symbols

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// Tree-sitter's grammars are C: linking them would make git-ideate a cgo
// binary (libc at start-up, a C cross-compiler per release target). They
// live in a helper binary of their own, git-ideate-symbols
// (cmd/git-ideate-symbols), which reads one HelperRequest per line on
// stdin and answers one HelperReply per line on stdout. git-ideate finds
// it beside its own executable or on PATH; without it, Python,
// JavaScript, TypeScript and Rust are read by the fallback reader and
// every definition is marked Weaker.

// HelperName is the helper binary's name (without .exe).
const HelperName = "git-ideate-symbols"

// HelperEnv names the helper to use instead of looking for one: a path,
// or "off" for none (the fallback reader everywhere).
const HelperEnv = "GIT_IDEATE_SYMBOLS"

// HelperProtocol is the protocol version every reply carries; a reply of
// another version is not used.
const HelperProtocol = 1

// helperLineMax bounds one request or reply line (a source file, base64,
// or its definitions).
const helperLineMax = 64 << 20

// helperTimeout bounds one file's parse: a helper that takes longer is
// killed and the file read by the fallback reader.
const helperTimeout = 30 * time.Second

// HelperRequest is one file to read.
type HelperRequest struct {
	Lang Lang   `json:"lang"`
	Path string `json:"path"` // chooses the grammar (.tsx)
	Src  []byte `json:"src"`
}

// HelperDef is one definition the helper found, offsets in bytes of Src.
type HelperDef struct {
	Name      string `json:"name"`
	Recv      string `json:"recv,omitempty"`
	Kind      Kind   `json:"kind"`
	Start     int    `json:"start"`
	End       int    `json:"end"`
	BodyStart int    `json:"body_start,omitempty"`
	BodyEnd   int    `json:"body_end,omitempty"`
	NameOff   int    `json:"name_off"`
	Exported  bool   `json:"exported,omitempty"`
	Decorated bool   `json:"decorated,omitempty"`
}

// HelperReply is the helper's answer to one request.
type HelperReply struct {
	V          int         `json:"v"`
	Defs       []HelperDef `json:"defs"`
	ParseError string      `json:"parse_error,omitempty"` // the file has syntax errors
	Error      string      `json:"error,omitempty"`       // the file was not read (no grammar)
}

// NewHelperScanner reads request or reply lines up to their bound.
func NewHelperScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), helperLineMax)
	return sc
}

// helperPath is the helper to run, "" for none; looked up once.
var helperPath = sync.OnceValue(func() string {
	switch v := os.Getenv(HelperEnv); v {
	case "off":
		return ""
	case "":
	default:
		return v
	}
	name := HelperName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		p := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
})

// Weaker reports whether this process reads languages other than Go with
// the fallback reader: no git-ideate-symbols helper was found.
func Weaker() bool { return helperPath() == "" }

// readDefs reads src's definitions through the helper, or with the
// fallback reader (weaker) when there is none or it fails. When ctx ends
// first the helper is killed and the error is ctx's.
func readDefs(ctx context.Context, lang Lang, p string, src []byte, toks []Token) ([]def, bool, string, error) {
	rep, ok, err := helpers.ask(ctx, helperPath(), HelperRequest{Lang: lang, Path: p, Src: src})
	if err != nil {
		return nil, false, "", err
	}
	if ok {
		defs := make([]def, 0, len(rep.Defs))
		for _, d := range rep.Defs {
			defs = append(defs, def{name: d.Name, recv: d.Recv, kind: d.Kind, start: d.Start, end: d.End,
				bodyStart: d.BodyStart, bodyEnd: d.BodyEnd, nameOff: d.NameOff, exported: d.Exported, decorated: d.Decorated})
		}
		return defs, false, rep.ParseError, nil
	}
	return fallbackDefs(lang, src, toks), true, "", nil
}

// helperProc is one running helper.
type helperProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// helperPool holds idle helpers: files are parsed in parallel (the
// structure gate's workers), one request at a time per helper, at most
// GOMAXPROCS helpers. Each lives until this process ends: its stdin
// closes then and it exits.
type helperPool struct {
	mu      sync.Mutex
	idle    []*helperProc
	running int
	wake    *sync.Cond
}

var helpers = newHelperPool()

func newHelperPool() *helperPool {
	p := &helperPool{}
	p.wake = sync.NewCond(&p.mu)
	return p
}

// ask sends one request to the helper at path; ok is false when there is
// none ("") or it did not answer (it is then stopped and a later request
// starts another). When ctx ends first the helper's process group is
// killed and err is ctx's.
func (p *helperPool) ask(ctx context.Context, path string, req HelperRequest) (rep HelperReply, ok bool, err error) {
	if path == "" {
		return HelperReply{}, false, nil
	}
	h, err := p.get(ctx, path)
	if err != nil {
		return HelperReply{}, false, ctx.Err()
	}
	type answer struct {
		rep HelperReply
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		b, err := json.Marshal(req)
		if err == nil {
			_, err = h.in.Write(append(b, '\n'))
		}
		if err == nil && !h.out.Scan() {
			err = h.out.Err()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
		}
		if err == nil {
			err = json.Unmarshal(h.out.Bytes(), &a.rep)
		}
		if err == nil && a.rep.V != HelperProtocol {
			err = errors.New("another protocol version")
		}
		a.err = err
		done <- a
	}()
	select {
	case a := <-done:
		if a.err != nil {
			p.drop(h)
			return HelperReply{}, false, nil
		}
		p.put(h)
		return a.rep, a.rep.Error == "", nil
	case <-ctx.Done():
		p.drop(h)
		return HelperReply{}, false, ctx.Err()
	case <-time.After(helperTimeout):
		p.drop(h)
		return HelperReply{}, false, nil
	}
}

// get hands out an idle helper or starts one, waiting while GOMAXPROCS
// run; the wait ends with ctx.
func (p *helperPool) get(ctx context.Context, path string) (*helperProc, error) {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.wake.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) == 0 && p.running >= runtime.GOMAXPROCS(0) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.wake.Wait()
	}
	if n := len(p.idle); n > 0 {
		h := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return h, nil
	}
	// The helper is a co-process that serves later calls too, so no one
	// call's ctx is bound to it: ask kills it when the ctx of the call it
	// serves ends first. It runs in a group of its own and is killed whole
	// (drop).
	cmd := exec.Command(path)
	osproc.Group(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.running++
	return &helperProc{cmd: cmd, in: in, out: NewHelperScanner(out)}, nil
}

func (p *helperPool) put(h *helperProc) {
	p.mu.Lock()
	p.idle = append(p.idle, h)
	p.mu.Unlock()
	p.wake.Signal()
}

func (p *helperPool) drop(h *helperProc) {
	osproc.KillGroup(h.cmd.Process)
	h.in.Close()
	go h.cmd.Wait()
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	p.wake.Signal()
}
