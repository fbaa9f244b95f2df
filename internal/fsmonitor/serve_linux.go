package fsmonitor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/ideate/git-ideate/internal/osproc"
)

// treeMask is what a directory of the tree is watched for.
const treeMask = syscall.IN_CREATE | syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE |
	syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF |
	syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

// extraMask is what a directory beside the tree is watched for.
const extraMask = syscall.IN_CREATE | syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_TO | syscall.IN_MOVED_FROM |
	syscall.IN_DELETE | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_ONLYDIR

// errWatchLimit: the kernel refused another watch (fs.inotify.max_user_watches).
var errWatchLimit = errors.New("the inotify watch limit is reached")

// errOverflow: the kernel dropped events.
var errOverflow = errors.New("the inotify queue overflowed")

type server struct {
	o      Options
	ctx    context.Context
	cancel context.CancelCauseFunc
	fd     int
	file   *os.File
	skip   map[string]bool
	reseed map[string]bool

	mu      sync.Mutex
	dirs    map[int32]string // watch → directory of the tree ("" the top)
	extras  map[int32]*Extra
	stateWD int32
	tree    string // treeID of the top at start
	set     map[string]struct{}
	events  int
	failed  error
	waiters map[string]chan struct{}
	seq     int
}

// done is the cause of a clean end (stop, removal, idle).
var errDone = errors.New("monitor ended")

// Serve runs the monitor of o.Root until it ends (see the package doc).
// It returns ErrRunning when another monitor holds o.StateDir, nil after a
// clean end (Stop, the tree or state directory removed, idle, ctx), and
// the reason otherwise (an overflow, the watch limit, a failed seed).
func Serve(ctx context.Context, o Options) error {
	if o.CookieWait == 0 {
		o.CookieWait = 2 * time.Second
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(o.StateDir, LockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open lock: %w", err)
	}
	defer lock.Close()
	if err := osproc.Lock(lock, osproc.Exclusive|osproc.NoWait); err != nil {
		if errors.Is(err, osproc.ErrLocked) {
			return ErrRunning
		}
		return fmt.Errorf("lock: %w", err)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("inotify: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s := &server{o: o, ctx: ctx, cancel: cancel, fd: fd, file: os.NewFile(uintptr(fd), "inotify"),
		skip: map[string]bool{}, reseed: map[string]bool{},
		dirs: map[int32]string{}, extras: map[int32]*Extra{}, set: map[string]struct{}{},
		waiters: map[string]chan struct{}{}}
	defer s.file.Close()
	s.tree = treeID(o.Root)
	for _, n := range o.Skip {
		s.skip[n] = true
	}
	for _, n := range o.Reseed {
		s.reseed[n] = true
	}
	wd, err := syscall.InotifyAddWatch(fd, o.StateDir, syscall.IN_CREATE|syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF|syscall.IN_ONLYDIR)
	if err != nil {
		return fmt.Errorf("watch %s: %w", o.StateDir, err)
	}
	s.stateWD = int32(wd)
	for i := range o.Extras {
		x := &o.Extras[i]
		wd, err := syscall.InotifyAddWatch(fd, x.Dir, extraMask)
		if err != nil {
			return fmt.Errorf("watch %s: %w", x.Dir, err)
		}
		s.extras[int32(wd)] = x
	}
	// Watches first, then the seed: a change during the seed is an event.
	if err := s.addTree(""); err != nil {
		return err
	}
	if err := s.seed(); err != nil {
		return err
	}
	ln, err := net.Listen("unix", SocketName(o.StateDir))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return ErrRunning
		}
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.read() }()
	var idle *time.Timer
	if o.Idle > 0 {
		idle = time.AfterFunc(o.Idle, func() { cancel(errDone) })
		defer idle.Stop()
	}
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if ctx.Err() == nil {
					cancel(fmt.Errorf("accept: %w", err))
				}
				return
			}
			if idle != nil {
				idle.Reset(o.Idle)
			}
			wg.Add(1)
			go func() { defer wg.Done(); s.serve(c.(*net.UnixConn)) }()
		}
	}()
	if o.Ready != nil {
		o.Ready()
	}
	<-ctx.Done()
	ln.Close()
	s.file.Close()
	wg.Wait()
	s.mu.Lock()
	for name := range s.waiters {
		os.Remove(filepath.Join(o.StateDir, name))
	}
	s.mu.Unlock()
	if cause := context.Cause(ctx); cause != errDone && cause != context.Canceled && cause != context.DeadlineExceeded {
		return cause
	}
	return nil
}

// seed replaces the candidate set with the caller's full scan. Called
// with no event being processed, so every later change is an event.
//
// A scan that fails is tried again a few times: a file being written
// while it is read ("changed size while being read") or replaced makes a
// scan fail for a moment, and the monitor would otherwise exit and leave
// every query to the full scan. Events of the writes meanwhile queue up
// and are read after, so a retried seed is as sound as the first.
func (s *server) seed() error {
	var paths []string
	var err error
	wait := 10 * time.Millisecond
	for try := 0; try < 5; try++ {
		if paths, err = s.o.Seed(s.ctx); err == nil || s.ctx.Err() != nil {
			break
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(wait):
		}
		wait *= 2
	}
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	s.set = make(map[string]struct{}, len(paths))
	for _, p := range paths {
		s.set[p] = struct{}{}
	}
	return nil
}

// addTree watches rel and every directory under it, and names each
// directory a watch already had under its new path (a moved directory).
func (s *server) addTree(rel string) error {
	top := filepath.Join(s.o.Root, filepath.FromSlash(rel))
	return filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == top {
				return nil // gone already; the event named it
			}
			return fs.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		r, _ := filepath.Rel(s.o.Root, p)
		r = filepath.ToSlash(r)
		if r == "." {
			r = ""
		}
		if !strings.Contains(r, "/") && s.skip[r] {
			return fs.SkipDir
		}
		wd, err := syscall.InotifyAddWatch(s.fd, p, treeMask)
		switch {
		case errors.Is(err, syscall.ENOSPC):
			return errWatchLimit
		case err != nil:
			return fs.SkipDir
		}
		s.dirs[int32(wd)] = r
		return nil
	})
}

// fail ends the monitor on an event it cannot account for.
func (s *server) fail(err error) {
	if s.failed == nil {
		s.failed = err
	}
	s.cancel(err)
}

func (s *server) read() {
	buf := make([]byte, 64<<10)
	for {
		n, err := s.file.Read(buf)
		if err != nil {
			if s.ctx.Err() == nil {
				s.mu.Lock()
				s.fail(fmt.Errorf("read inotify: %w", err))
				s.mu.Unlock()
			}
			return
		}
		if s.o.EventDelay > 0 {
			time.Sleep(s.o.EventDelay)
		}
		s.mu.Lock()
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				raw := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
				if i := strings.IndexByte(string(raw), 0); i >= 0 {
					raw = raw[:i]
				}
				name = string(raw)
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			s.event(ev.Wd, ev.Mask, name)
		}
		s.mu.Unlock()
		if s.ctx.Err() != nil {
			return
		}
	}
}

// event takes one event into account (s.mu held).
func (s *server) event(wd int32, mask uint32, name string) {
	if s.failed != nil {
		return
	}
	if mask&syscall.IN_Q_OVERFLOW != 0 {
		s.fail(errOverflow)
		return
	}
	s.events++
	if s.o.QueueLimit > 0 && s.events > s.o.QueueLimit {
		s.fail(fmt.Errorf("%w (test limit %d)", errOverflow, s.o.QueueLimit))
		return
	}
	const gone = syscall.IN_IGNORED | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF
	if wd == s.stateWD {
		if mask&gone != 0 {
			s.cancel(errDone)
			return
		}
		if ch, ok := s.waiters[name]; ok {
			close(ch)
			delete(s.waiters, name)
		}
		return
	}
	if x, ok := s.extras[wd]; ok {
		if mask&gone != 0 {
			s.cancel(errDone)
			return
		}
		if !slices.Contains(x.Names, name) {
			return
		}
		paths, reseed, err := x.OnChange(s.ctx, name)
		switch {
		case err != nil:
			s.fail(err)
		case reseed:
			if err := s.seed(); err != nil {
				s.fail(err)
			}
		default:
			for _, p := range paths {
				s.set[p] = struct{}{}
			}
		}
		return
	}
	rel, ok := s.dirs[wd]
	if !ok {
		return
	}
	if mask&syscall.IN_IGNORED != 0 {
		delete(s.dirs, wd)
	}
	if rel == "" && mask&gone != 0 {
		s.cancel(errDone) // the tree is removed or moved
		return
	}
	if name == "" {
		return
	}
	if rel == "" && s.skip[name] {
		return
	}
	p := path.Join(rel, name)
	s.set[p] = struct{}{}
	if s.reseed[name] {
		if err := s.seed(); err != nil {
			s.fail(err)
		}
		return
	}
	if mask&syscall.IN_ISDIR != 0 && mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0 {
		if err := s.addTree(p); err != nil {
			s.fail(err)
		}
	}
}

// serve answers one connection's request.
func (s *server) serve(c *net.UnixConn) {
	defer c.Close()
	if err := checkPeer(c); err != nil {
		return
	}
	c.SetDeadline(time.Now().Add(s.o.CookieWait + 5*time.Second))
	sc := bufio.NewScanner(c)
	var req request
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &req) != nil {
		writeReply(c, reply{Error: "the request does not parse"})
		return
	}
	switch req.Op {
	case "ping":
		writeReply(c, reply{PID: os.Getpid()})
	case "stop":
		writeReply(c, reply{PID: os.Getpid()})
		s.cancel(errDone)
	case "query":
		if req.Tree != s.tree {
			writeReply(c, reply{Error: "the monitor watches another tree at this path"})
			return
		}
		writeReply(c, s.query(req.Key))
	default:
		writeReply(c, reply{Error: fmt.Sprintf("unknown op %q", req.Op)})
	}
}

func writeReply(c net.Conn, r reply) {
	b, _ := json.Marshal(r)
	c.Write(append(b, '\n'))
}

// query waits for a fresh cookie's event, then answers the set.
func (s *server) query(key string) reply {
	if key != s.o.Key {
		return reply{Error: fmt.Sprintf("the monitor was seeded against %s, not %s", s.o.Key, key)}
	}
	s.mu.Lock()
	if s.failed != nil {
		s.mu.Unlock()
		return reply{Error: s.failed.Error()}
	}
	s.seq++
	name := fmt.Sprintf("%s%d-%d", CookiePrefix, os.Getpid(), s.seq)
	ch := make(chan struct{})
	s.waiters[name] = ch
	s.mu.Unlock()
	cookie := filepath.Join(s.o.StateDir, name)
	defer os.Remove(cookie)
	f, err := os.OpenFile(cookie, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		s.mu.Lock()
		delete(s.waiters, name)
		s.mu.Unlock()
		return reply{Error: fmt.Sprintf("create cookie: %v", err)}
	}
	f.Close()
	t := time.NewTimer(s.o.CookieWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		s.mu.Lock()
		delete(s.waiters, name)
		s.mu.Unlock()
		return reply{Error: "the cookie's event did not arrive in time"}
	case <-s.ctx.Done():
		return reply{Error: "the monitor is ending"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return reply{Error: s.failed.Error()}
	}
	s.events = 0
	out := make([]string, 0, len(s.set))
	for p := range s.set {
		out = append(out, p)
	}
	slices.Sort(out)
	return reply{Paths: out}
}
