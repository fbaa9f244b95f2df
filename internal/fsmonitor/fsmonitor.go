package fsmonitor

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
)

// ErrRunning is returned by Serve when another monitor holds the state
// directory's lock.
var ErrRunning = errors.New("a monitor already serves this tree")

// ErrUnavailable wraps every reason a query got no answer (no monitor, a
// stale one, an overflow, a timeout, a protocol error): the caller falls
// back to a full scan.
var ErrUnavailable = errors.New("no monitor answered")

// LockFile and CookiePrefix are the files a monitor keeps in its state
// directory.
const (
	LockFile     = "lock"
	CookiePrefix = "cookie-"
)

// Extra is a directory beside the tree (e.g. the worktree's git directory)
// whose entries named in Names matter: when one is created, written,
// moved in or deleted, OnChange names the paths of the tree that may have
// changed with it, or asks for a fresh seed.
type Extra struct {
	Dir      string
	Names    []string
	OnChange func(ctx context.Context, name string) (paths []string, reseed bool, err error)
}

// Options configure Serve.
type Options struct {
	// Root is the top of the tree to watch.
	Root string
	// StateDir holds the lock and the cookies; it is created, and its
	// removal stops the monitor.
	StateDir string
	// Key names what the seed was computed against (a base commit); a
	// query with another key is refused.
	Key string
	// Seed lists the paths that differ at start (the caller's full scan).
	Seed func(ctx context.Context) ([]string, error)
	// Skip lists paths of the top directory never watched nor reported
	// (".git").
	Skip []string
	// Reseed lists base names whose change anywhere in the tree calls
	// Seed again (.gitignore: what is ignored changed).
	Reseed []string
	// Extras are directories beside the tree.
	Extras []Extra
	// Idle ends the monitor after this long without a query (0: never).
	Idle time.Duration
	// CookieWait bounds a query's wait for its cookie (default 2s).
	CookieWait time.Duration
	// QueueLimit, a test hook, treats more than this many events between
	// two queries as a queue overflow, as a kernel queue that small would
	// (0: off).
	QueueLimit int
	// EventDelay, a test hook, delays the reading of each batch of events,
	// as a loaded machine may.
	EventDelay time.Duration
	// Ready is called once the monitor answers queries.
	Ready func()
}

// Supported reports whether this platform has a monitor (Linux); where it
// has none, every query falls back and spawning one is pointless.
func Supported() bool { return runtime.GOOS == "linux" }

// SocketName is the abstract socket name of the monitor of stateDir.
func SocketName(stateDir string) string {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		abs = stateDir
	}
	sum := sha256.Sum256([]byte(abs))
	return "@git-ideate-fsmonitor-" + hex.EncodeToString(sum[:12])
}

type request struct {
	Op  string `json:"op"` // query, ping, stop
	Key string `json:"key,omitempty"`
	// Tree is the device and inode of the tree's top as the client sees
	// it: a monitor of a tree removed and made again at the same path
	// (ending, but not gone yet) is refused.
	Tree string `json:"tree,omitempty"`
}

// treeID names the directory at root by device and inode ("" where the
// system has none).
func treeID(root string) string {
	fi, err := os.Stat(root)
	if err != nil {
		return "missing"
	}
	if dev, ino, ok := osproc.Inode(fi); ok {
		return fmt.Sprintf("%d:%d", dev, ino)
	}
	return ""
}

type reply struct {
	Paths []string `json:"paths,omitempty"`
	Error string   `json:"error,omitempty"`
	PID   int      `json:"pid,omitempty"`
}

// Query asks the monitor of stateDir which paths of the tree at root may
// differ from key. A nil error means the answer is sound; any failure
// wraps ErrUnavailable. The wait is bounded by timeout and ctx.
func Query(ctx context.Context, stateDir, root, key string, timeout time.Duration) ([]string, error) {
	r, err := call(ctx, stateDir, request{Op: "query", Key: key, Tree: treeID(root)}, timeout)
	if err != nil {
		return nil, err
	}
	if r.Paths == nil {
		r.Paths = []string{}
	}
	return r.Paths, nil
}

// Ping returns the pid of the monitor of stateDir once it answers.
func Ping(ctx context.Context, stateDir string, timeout time.Duration) (int, error) {
	r, err := call(ctx, stateDir, request{Op: "ping"}, timeout)
	if err != nil {
		return 0, err
	}
	return r.PID, nil
}

// Stop asks the monitor of stateDir to end and waits until it answers; no
// monitor is not an error.
func Stop(ctx context.Context, stateDir string, timeout time.Duration) error {
	_, err := call(ctx, stateDir, request{Op: "stop"}, timeout)
	if err != nil && errors.Is(err, errNoMonitor) {
		return nil
	}
	return err
}

var errNoMonitor = errors.New("no monitor listens")

func call(ctx context.Context, stateDir string, req request, timeout time.Duration) (*reply, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", SocketName(stateDir))
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %v", ErrUnavailable, errNoMonitor, err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	if err := checkPeer(uc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("%w: send: %v", ErrUnavailable, err)
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("%w: no reply: %v", ErrUnavailable, sc.Err())
	}
	var r reply
	if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("%w: reply does not parse: %v", ErrUnavailable, err)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, r.Error)
	}
	return &r, nil
}

// Spawn starts argv as a detached monitor process: its own session and
// process group, stdio on /dev/null, the current directory at /, the
// environment env (nil: this process's). It does not wait for the monitor
// to answer (see Ping). The child is reaped by a goroutine while this
// process lives.
func Spawn(ctx context.Context, argv, env []string) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("spawn: no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = "/"
	cmd.Env = env
	osproc.Detach(cmd)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("spawn monitor: %w", err)
	}
	pid := cmd.Process.Pid
	go cmd.Wait()
	return pid, nil
}
