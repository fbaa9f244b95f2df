package gitstore

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maintenance keeps the repository healthy without user action: many small
// commits leave many loose objects, so after commits it estimates the loose
// object count the way git does (entries in objects/17 × 256) and, past
// gc.auto, starts a detached background repack.
//
// It does not start `git gc --auto`: under a burst of appends a detached gc
// warns "too many unreachable loose objects" and writes gc.log, which stops
// every later `git gc --auto` for a day while loose objects pile up.
// Instead it packs the loose objects (`git pack-objects` of every loose
// object by name), or, past gc.autoPackLimit packs, runs `git repack -A -d
// -q`, `git prune --expire=1.hour.ago` (objects of lost compare-and-swap
// attempts are unreachable; an hour is far beyond any write in flight) and
// `git pack-refs --all`. A lock file under .git/ideate keeps two jobs from
// running at once. Disabled by ideate.maintenance=false or
// $GIT_IDEATE_NO_MAINTENANCE.
//
// # Nothing is deleted after the call has answered
//
// Maintenance takes things away: the loose copies of what was packed, the
// packs a full repack made redundant. git's object readers tolerate that
// (on a miss they rescan the packs), but a reader that lists files first
// and opens them later does not: `git fsck` run while `git repack -d`
// deletes reports "object corrupt or missing" for a loose object it had
// listed, or "packfile … cannot be accessed". No order of deletions avoids
// that, so deletions happen only inside a call, never after it answered:
//
//   - The usual repack (pack-objects, no deletion) runs in the background and
//     deletes nothing; when it is done it leaves a "repacked" mark.
//
//   - The next commit that finds the mark and no repack running deletes the
//     loose copies (`git prune-packed`) before it returns: an unlink per
//     packed object, no packing.
//
//   - The full repack (`repack -A -d`, prune), once per gc.autoPackLimit
//     repacks, is waited for by the commit that started it.
//
//   - A transaction's objects are one pack (see pending), so packs pile up
//     rather than loose objects: past rollUpAt packs, a commit starts a
//     roll-up in the background (the small packs merged into one, chosen
//     as `git repack --geometric=2` chooses them, see rollUpSet), and the
//     commit after it deletes the merged packs: two or three unlinks per
//     pack, no packing.
//
//   - None of these deletions happens while a git gc runs (gc.pid): its
//     last listing may have missed a pack maintenance just made and
//     delete that pack's index (see gcRunning); the next commit looks
//     again.
//
// When a command, hook or MCP call has answered, nothing it started is
// still deleting, so git commands run after it see a whole repository.
//
// # Not bound to a context
//
// The repack itself is the one process gitstore starts that no ctx
// governs: it is started detached (a session of its own, see detached), so
// a cancelled caller, a ^C or a killed hook stops waiting for a full
// repack but does not kill it half-way, which would leave temporary packs
// behind and gain nothing (it holds no lock the caller needs). ctx bounds
// the wait and the prune-packed a commit runs.
type maintenance struct {
	enabled   bool
	threshold int64
	store     *Store

	mu      sync.Mutex
	written int
	checked bool
	packs   int // packs this process wrote since it last counted them
	// listed is the number of packs the last listing of objects/pack found
	// (-1: none yet), sinceListed the packs this process wrote since then.
	// Until they add up to rollUpAt no roll-up can be due, so the directory
	// is not listed after every commit. Packs other processes write
	// meanwhile are theirs to count.
	listed, sinceListed int
	// child is closed when the last roll-up or repack this process
	// started has ended (nil: it started none).
	child chan struct{}
}

func (m *maintenance) wrote() {
	m.mu.Lock()
	m.written++
	m.mu.Unlock()
}

func (m *maintenance) packed() {
	m.mu.Lock()
	m.packs++
	m.mu.Unlock()
}

// testHookListPacks, when set, runs each time rollUpSet lists objects/pack.
var testHookListPacks func()

// rollUpAt is the number of packs at which a commit starts a roll-up.
const rollUpAt = 16

// PacksAtMost is the number of packs at which a commit waits for the
// roll-up its own process runs rather than add to them. A burst of
// in-process commits (the MCP server, a sync: a few ms each) outruns a
// roll-up (a git process of ~100 ms, more on a loaded machine), and every
// read searches every pack. Past this count the commit that would add one more waits (ctx bounds the wait)
// until the roll-up has ended and deletes what it merged; below it no
// commit waits for a roll-up. Packs other processes write meanwhile are
// not counted, and their roll-ups not waited for.
const PacksAtMost = 8 * rollUpAt

// waitRollUp waits until child (the roll-up this process started) has
// ended or ctx is done, then deletes the packs it merged. A child already
// ended is not waited for: the commit's finishRepack has deleted them.
func (m *maintenance) waitRollUp(ctx context.Context, child <-chan struct{}) {
	select {
	case <-child:
		return
	default:
	}
	select {
	case <-child:
	case <-ctx.Done():
		return
	}
	rollUpWaits.Add(1)
	m.finishRollUp()
}

// rollUpWaits counts the commits that waited for a roll-up (tests).
var rollUpWaits atomic.Int64

// committed runs after a commit: when the loose objects are past gc.auto
// it starts the repack and waits until it is done or ctx is.
func (m *maintenance) committed(ctx context.Context) {
	if !m.enabled || m.threshold <= 0 {
		return
	}
	m.finishRepack(ctx)
	m.mu.Lock()
	due := !m.checked || m.written >= 256
	packs := m.packs
	m.packs = 0
	m.mu.Unlock()
	if due && m.needed() {
		if m.running() {
			return // a roll-up runs: look again at the next commit
		}
		m.mu.Lock()
		m.checked, m.written = true, 0
		m.mu.Unlock()
	} else {
		if due {
			m.mu.Lock()
			m.checked, m.written = true, 0
			m.mu.Unlock()
		}
		m.mu.Lock()
		m.sinceListed += packs
		mayRollUp := m.listed < 0 || m.listed+m.sinceListed >= rollUpAt
		piled := m.listed >= 0 && m.listed+m.sinceListed >= PacksAtMost
		child := m.child
		m.mu.Unlock()
		if packs > 0 && piled && child != nil {
			m.waitRollUp(ctx, child)
		}
		if packs > 0 && mayRollUp && !m.running() {
			if merged := m.rollUpSet(); len(merged) > 0 {
				m.spawnRollUp(merged)
			}
		}
		return
	}
	if done := m.spawn(); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
}

// finishRepack deletes the loose copies of what a finished background
// repack packed (`git prune-packed`), once: the mark is taken by rename,
// so of two committers one runs it.
func (m *maintenance) finishRepack(ctx context.Context) {
	m.finishRollUp()
	dir := m.store.repo.StateDir()
	mark := filepath.Join(dir, "repacked")
	if _, err := os.Stat(mark); err != nil {
		return
	}
	if m.running() {
		return // its repack is finishing, or another one runs
	}
	if gcRunning(m.store.repo.CommonDir) {
		// A git gc that listed objects/pack while the repack put its pack
		// in place may yet delete that pack's index (see gcRunning); the
		// loose copies stay until it has ended.
		return
	}
	taken := mark + ".taken-" + strconv.FormatUint(rand.Uint64(), 36)
	if os.Rename(mark, taken) != nil {
		return
	}
	defer os.Remove(taken)
	_ = m.store.git(ctx, "prune-packed", "-q").Run()
}

// needed applies git's own test (builtin/gc.c): more than
// ceil(gc.auto/256) loose objects in objects/17. Using the same test means
// a spawned `git gc --auto` never decides there is nothing to do.
func (m *maintenance) needed() bool {
	return m.LooseEstimate()/256 > (m.threshold+255)/256
}

// LooseEstimate is git's estimate of the number of loose objects.
func (m *maintenance) LooseEstimate() int64 {
	d, err := os.Open(filepath.Join(m.store.repo.CommonDir, "objects", "17"))
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	return int64(len(names)) * 256
}

// spawn starts a repack unless one is running. For a full repack it
// returns a channel closed when it has exited; for the usual one, which
// deletes nothing, nil (as when none was started).
func (m *maintenance) spawn() <-chan struct{} {
	dir := m.store.repo.StateDir()
	lock := filepath.Join(dir, "maintenance.lock")
	if !breakStaleMaintenance(lock) {
		return nil // a roll-up or repack is running
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil
	}
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil
	}
	f.WriteString("repack\n") // what holds the lock, for people and tests
	defer f.Close()
	gd := shellQuote(m.store.repo.CommonDir)
	// The usual repack packs every loose object, listed by name. (`git
	// repack` without -a walks from the refs with --unpacked, which stops
	// at commits already in a pack: loose objects those commits reach, as
	// a write outside a transaction leaves, would never be packed.)
	objs := shellQuote(filepath.Join(m.store.repo.CommonDir, "objects"))
	script := "cd " + objs + " && find ?? -type f | grep -E '^[0-9a-f]{2}/[0-9a-f]{38}$' | tr -d / | git --git-dir=" + gd +
		" pack-objects -q pack/pack > /dev/null && : > " + shellQuote(filepath.Join(dir, "repacked"))
	full := m.packCount() > int(m.store.cfg.Int("gc", "autopacklimit", 50))
	if full {
		// -A, not -a: an object of a pack whose ref has not moved yet when
		// repack reads the refs (a write in flight, see pending) is
		// unreachable to it; -a would drop it with its pack, -A keeps it
		// as a loose object for prune's grace period, as git gc does.
		script = "git --git-dir=" + gd + " repack -A -d -q && git --git-dir=" + gd +
			" prune --expire=1.hour.ago && git --git-dir=" + gd + " pack-refs --all"
	}
	script = "(" + script + ")" + finishShell(lock)
	cmd := detached("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		os.Remove(lock)
		return nil
	}
	lockStarted(f, cmd.Process.Pid)
	done := m.started(cmd)
	if !full {
		return nil
	}
	return done
}

func (m *maintenance) packCount() int {
	d, err := os.Open(filepath.Join(m.store.repo.CommonDir, "objects", "pack"))
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".pack") {
			n++
		}
	}
	return n
}

// looseRefs counts the entries of prefix's directory (one directory read).
func (s *Store) looseRefs(prefix string) int {
	d, err := os.Open(s.refs.dirOf(prefix))
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	return len(names)
}

// PackRefsNow runs `git pack-refs --all` and waits for it when any of the
// prefixes' directories holds more than threshold loose refs. A sync that
// has just created thousands of refs uses it: the next command then reads
// one packed-refs file instead of thousands of files. It runs even when
// background maintenance is off (it is part of the command, not
// housekeeping), and a failure only leaves the refs loose. ctx bounds the
// wait: when it is done, git is killed and the refs stay loose.
func (s *Store) PackRefsNow(ctx context.Context, threshold int, prefixes ...string) bool {
	for _, p := range prefixes {
		if s.looseRefs(p) > threshold {
			return s.git(ctx, "pack-refs", "--all").Run() == nil
		}
	}
	return false
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// packRefsEvery is the least time between two background pack-refs. Every
// claim lists the board's items and reads each loose one, so a burst of
// board writes is packed again within a quarter of a second.
const packRefsEvery = 250 * time.Millisecond

// PackRefsIfLoose starts `git pack-refs --all` in the background when the
// directory of prefix holds more than threshold loose refs, so namespaces
// with thousands of refs (board items) stay cheap to list. It costs one
// directory read. Like the repack (see maintenance), the process is
// detached and outlives ctx; ctx only decides whether it is started: a
// caller already cancelled starts nothing.
func (s *Store) PackRefsIfLoose(ctx context.Context, prefix string, threshold int) {
	if ctx.Err() != nil || !s.maint.enabled || s.looseRefs(prefix) <= threshold {
		return
	}
	stamp := filepath.Join(s.repo.StateDir(), "pack-refs.stamp")
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < packRefsEvery {
		return
	}
	if fi, err := os.Stat(filepath.Join(s.repo.CommonDir, "packed-refs.lock")); err == nil && time.Since(fi.ModTime()) < time.Minute {
		return // a pack-refs runs (or died a moment ago: git's own lock)
	}
	if os.MkdirAll(s.repo.StateDir(), 0o777) != nil || os.WriteFile(stamp, nil, 0o666) != nil {
		return
	}
	now := time.Now()
	os.Chtimes(stamp, now, now)
	cmd := detached("git", "--git-dir="+s.repo.CommonDir, "pack-refs", "--all")
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// running reports whether a maintenance process holds the lock. The
// shell removes the lock as its last step, so a job that has done its
// work no longer counts, whether or not this process has reaped it.
func (m *maintenance) running() bool {
	path := filepath.Join(m.store.repo.StateDir(), "maintenance.lock")
	fi, err := os.Stat(path)
	return err == nil && !lockStale(path, fi)
}

// The maintenance lock (.git/ideate/maintenance.lock) says a background
// roll-up or repack runs: its first line names which, and once the
// process has started a second line, "pid <N> <host>", names the shell
// that removes the lock as its last step. A shell killed before that
// step (kill -9, the OOM killer, a machine put to sleep and restarted)
// leaves the lock behind. Judged by its age alone, such a lock would stop
// every roll-up for 30 minutes while each write adds a pack, so a lock
// whose shell is gone on this host is stale at once.
const (
	lockMaxAge   = 30 * time.Minute // past it, any lock is stale
	lockNoPidAge = time.Minute      // past it, a lock that never got its pid line is stale
)

// lockStale reports whether the maintenance lock at path, of file info
// fi, no longer stands for a running process: it is older than
// lockMaxAge; or its pid line names a process of this host that is gone;
// or it has no pid line and is older than lockNoPidAge (its spawner died
// between making it and starting the shell). A lock of another host, or
// one it cannot read, is taken as held.
func lockStale(path string, fi os.FileInfo) bool {
	age := time.Since(fi.ModTime())
	if age >= lockMaxAge {
		return true
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "pid "); ok {
			return goneHere(rest)
		}
	}
	return age >= lockNoPidAge
}

// breakStaleMaintenance removes the maintenance lock at path when it is stale,
// and reports whether there is none now. It moves the file aside first,
// so that of two callers only one removes it; when what it moved proves
// to be a live lock (another caller's, made in between), it is put back
// unless a newer one is there already.
func breakStaleMaintenance(path string) bool {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil || !lockStale(path, fi) {
		return false
	}
	aside := path + ".stale-" + strconv.FormatUint(rand.Uint64(), 36)
	if os.Rename(path, aside) != nil {
		return false
	}
	defer os.Remove(aside)
	if fi, err := os.Stat(aside); err == nil && !lockStale(aside, fi) {
		os.Link(aside, path)
		return false
	}
	return true
}

// lockStarted adds the pid line of the shell that now holds the
// maintenance lock, through f, the file its spawner made: should the
// shell have ended already and another process made a lock of its own,
// the line goes to the removed file, never to that one.
func lockStarted(f *os.File, pid int) {
	host, _ := os.Hostname()
	f.WriteString("pid " + strconv.Itoa(pid) + " " + host + "\n")
}

// rollUpSet chooses the packs a roll-up merges, the way git repack
// --geometric=2 does: sorted by the objects they hold, the largest packs
// that each hold at least twice the objects of all smaller ones together
// stay, the rest are merged into one. It chooses nothing below rollUpAt
// packs. Packs with a .keep file are never chosen.
//
// Objects, not bytes (as git counts too): a write's pack stores its trees
// undeflated and nothing as a delta, so weighed by bytes a few dozen
// writes would outweigh the roll-ups' large pack and have it merged again
// and again. A pack's object count is read off its index's size
// (idxObjects).
func (m *maintenance) rollUpSet() (merged []string) {
	dir := filepath.Join(m.store.repo.CommonDir, "objects", "pack")
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	if testHookListPacks != nil {
		testHookListPacks()
	}
	ents, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	// Every commit of a store that writes packs asks; most find fewer than
	// rollUpAt packs, and a listing is then all it costs (no sort, no stat).
	count := 0
	for _, e := range ents {
		if strings.HasSuffix(e, ".pack") {
			count++
		}
	}
	m.mu.Lock()
	m.listed, m.sinceListed = count, 0
	m.mu.Unlock()
	if count < rollUpAt {
		return nil
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e] = true
	}
	type pk struct {
		name string
		size int64 // objects
	}
	var packs []pk
	for _, e := range ents {
		if base, ok := strings.CutSuffix(e, ".keep"); ok && names[base+".pack"] {
			m.dropStaleKeep(filepath.Join(dir, base))
		}
	}
	for _, e := range ents {
		base, ok := strings.CutSuffix(e, ".pack")
		if !ok || !names[base+".idx"] || names[base+".keep"] || names[base+".promisor"] {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, base+".idx")); err == nil {
			packs = append(packs, pk{e, idxObjects(fi.Size())})
		}
	}
	if len(packs) < rollUpAt {
		return nil
	}
	sort.Slice(packs, func(i, j int) bool { return packs[i].size < packs[j].size })
	sums := make([]int64, len(packs)+1)
	for i, p := range packs {
		sums[i+1] = sums[i] + p.size
	}
	split := 0
	for i := len(packs) - 1; i > 0; i-- {
		if packs[i].size < 2*sums[i] {
			split = i + 1
			break
		}
	}
	if split < 2 {
		return nil
	}
	for _, p := range packs[:split] {
		merged = append(merged, p.name)
	}
	return merged
}

// spawnRollUp merges the packs named into one new pack in the background
// and deletes nothing. The new pack holds every object of those packs,
// whatever is reachable, so a pack whose ref has not moved yet loses
// nothing. When it is done it leaves the list as the "rolled-up" mark;
// the next commit deletes those packs (finishRollUp), so nothing is
// deleted after a call has answered.
//
// What git is told decides what the roll-up costs. `git pack-objects
// --stdin-packs` walks the history from the merged packs' commits down to
// the root, so a roll-up would cost more the longer the history; the
// object names read from the merged packs' indexes need no walk. The
// caller reads the indexes of up to
// rollUpListMax objects; the roll-up's shell has `git show-index` read
// the rest before pack-objects starts, outside the caller's call. Any
// failure there ends the roll-up before pack-objects runs: no mark, so
// nothing is deleted.
func (m *maintenance) spawnRollUp(merged []string) {
	dir := m.store.repo.StateDir()
	lock := filepath.Join(dir, "maintenance.lock")
	if err := os.MkdirAll(dir, 0o777); err != nil || !breakStaleMaintenance(lock) {
		return
	}
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return
	}
	f.WriteString("roll-up\n")
	defer f.Close()
	pdir := filepath.Join(m.store.repo.CommonDir, "objects", "pack")
	list := filepath.Join(dir, "rollup.list")
	input := filepath.Join(dir, "rollup.input")
	part := filepath.Join(dir, "rollup.part")
	in, later := rollUpInput(pdir, merged)
	if m.store.writeState(list, []byte(strings.Join(merged, "\n")+"\n")) != nil || m.store.writeState(input, in) != nil {
		os.Remove(list)
		os.Remove(lock)
		return
	}
	gd := shellQuote(m.store.repo.CommonDir)
	var b strings.Builder
	b.WriteString("(set -e; ")
	if len(later) > 0 {
		b.WriteString("for i in")
		for _, idx := range later {
			b.WriteString(" " + shellQuote(idx))
		}
		b.WriteString("; do git --git-dir=" + gd + " show-index < \"$i\" > " + shellQuote(part) +
			"; cut -d ' ' -f 2 " + shellQuote(part) + " >> " + shellQuote(input) + "; done; ")
	}
	// pack-objects prints the new pack's name; the mark carries it as
	// "+pack-<name>.pack" (see finishRollUp).
	b.WriteString("n=$(git --git-dir=" + gd + " pack-objects -q --delta-base-offset " +
		shellQuote(filepath.Join(pdir, "pack")) + " < " + shellQuote(input) + "); [ -n \"$n\" ]; echo \"+pack-$n.pack\" >> " +
		shellQuote(list) + "; mv " + shellQuote(list) + " " + shellQuote(filepath.Join(dir, "rolled-up")) + ")" + finishShell(input, part, lock))
	cmd := detached("sh", "-c", b.String())
	if err := cmd.Start(); err != nil {
		os.Remove(input)
		os.Remove(lock)
		return
	}
	lockStarted(f, cmd.Process.Pid)
	m.started(cmd)
}

// started reaps cmd, the shell of a roll-up or repack this process just
// started, in the background, and returns the channel closed once it has
// ended (also when the caller stopped waiting).
func (m *maintenance) started(cmd *exec.Cmd) <-chan struct{} {
	return m.background(func() { cmd.Wait() })
}

// background runs fn on a goroutine of its own as the maintenance this
// process runs (see running): the channel returned is closed when fn has
// returned.
func (m *maintenance) background(fn func()) <-chan struct{} {
	done := make(chan struct{})
	m.mu.Lock()
	m.child = done
	m.mu.Unlock()
	go func() {
		defer close(done)
		fn()
	}()
	return done
}

// writeState writes data to path, a file of the state directory that a
// roll-up's shell reads and appends to.
func (s *Store) writeState(path string, data []byte) error {
	return os.WriteFile(path, data, 0o666)
}

// rollUpListMax is the most objects whose names the caller of a roll-up
// reads from the merged packs' indexes (about 28 bytes of index read and
// 41 bytes written each, in the caller's call).
var rollUpListMax = 8192

// rollUpInput is what a roll-up's pack-objects reads, as far as the
// caller makes it: the object names, one per line, of the merged packs
// whose indexes it read (up to rollUpListMax objects in all, counted from
// the indexes' sizes). later holds the indexes of the others — past that
// count, or not readable here as version 2 — whose names the roll-up's
// shell adds with `git show-index`.
func rollUpInput(pdir string, merged []string) (in []byte, later []string) {
	total := 0
	for _, name := range merged {
		path := filepath.Join(pdir, strings.TrimSuffix(name, ".pack")+".idx")
		fi, err := os.Lstat(path)
		if err != nil || total+int(idxObjects(fi.Size())) > rollUpListMax {
			later = append(later, path)
			continue
		}
		idx, err := readSmall(path, nil, 0, nil)
		names, ok := idxNames(idx)
		if err != nil || !ok {
			later = append(later, path)
			continue
		}
		total += len(names) / 20
		for i := 0; i < len(names); i += 20 {
			in = append(hex.AppendEncode(in, names[i:i+20]), '\n')
		}
	}
	return in, later
}

// idxObjects is the number of objects a version 2 pack index of size
// bytes lists (a pack past 2 GiB has a few more bytes per large offset,
// which this counts as a little more), at least 1.
func idxObjects(size int64) int64 {
	return max(1, (size-int64(idxHead+idxTrailer))/idxPerObject)
}

// idxNames is the table of object names (20 bytes each) of a version 2
// pack index; ok is false when idx is not one, or too short for the
// count its fan-out gives.
func idxNames(idx []byte) (names []byte, ok bool) {
	if len(idx) < idxHead || string(idx[:len(idxV2Header)]) != idxV2Header {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(idx[idxHead-4:]))
	if len(idx) < idxHead+n*idxPerObject+idxTrailer {
		return nil, false
	}
	return idx[idxHead : idxHead+n*20], true
}

// finishRollUp deletes the packs a finished roll-up merged, once: the mark
// is taken by rename, so of two committers one deletes them. A pack's
// index goes first, so no reader finds an index without its pack.
//
// The mark's line "+pack-<new>.pack" names the pack the roll-up made. The
// merged packs go only once no git gc runs (else the next commit looks
// again) and that pack is whole, index and all: a gc that listed the pack
// directory while the roll-up put its pack in place may have deleted the
// index (see gcRunning), and then the merged packs stay. A mark without
// that line (left by an older version) deletes nothing.
func (m *maintenance) finishRollUp() {
	dir := m.store.repo.StateDir()
	mark := filepath.Join(dir, "rolled-up")
	if _, err := os.Stat(mark); err != nil || gcRunning(m.store.repo.CommonDir) {
		return
	}
	taken := mark + ".taken-" + strconv.FormatUint(rand.Uint64(), 36)
	if os.Rename(mark, taken) != nil {
		return
	}
	defer os.Remove(taken)
	data, err := os.ReadFile(taken)
	if err != nil {
		return
	}
	pdir := filepath.Join(m.store.repo.CommonDir, "objects", "pack")
	whole := false
	for _, name := range strings.Split(string(data), "\n") {
		if base, ok := strings.CutPrefix(name, "+"); ok {
			base, ok = strings.CutSuffix(base, ".pack")
			if ok && strings.HasPrefix(base, "pack-") && !strings.ContainsAny(base, "/\\") {
				_, errIdx := os.Stat(filepath.Join(pdir, base+".idx"))
				_, errPack := os.Stat(filepath.Join(pdir, base+".pack"))
				whole = errIdx == nil && errPack == nil
			}
		}
	}
	if !whole {
		return
	}
	var bases []string
	for _, name := range strings.Split(string(data), "\n") {
		if base, ok := strings.CutSuffix(name, ".pack"); ok && !strings.ContainsAny(base, "/\\") && strings.HasPrefix(base, "pack-") {
			bases = append(bases, filepath.Join(pdir, base))
		}
	}
	if db, err := m.store.db(); err == nil {
		db.DropPacks(bases)
	}
	for _, p := range bases {
		if os.Remove(p+".idx") != nil {
			continue
		}
		os.Remove(p + ".pack")
		os.Remove(p + ".rev")
		os.Remove(p + ".bitmap")
	}
}

// dropStaleKeep removes the .keep of pack base when it is one a writer
// killed between its pack and its ref left behind: a hard link to the
// pack itself (see writePack), over an hour old. A .keep that is a file
// of its own is someone else's and stays.
func (m *maintenance) dropStaleKeep(base string) {
	k, err := os.Stat(base + ".keep")
	if err != nil || time.Since(k.ModTime()) < time.Hour {
		return
	}
	if p, err := os.Stat(base + ".pack"); err == nil && os.SameFile(k, p) {
		os.Remove(base + ".keep")
	}
}

// finishShell is the shell a background roll-up or repack ends with: it
// removes the files named in last (the maintenance lock last of all: its
// removal says the job is done).
func finishShell(last ...string) string {
	cmd := "; rm -f"
	for _, f := range last {
		cmd += " " + shellQuote(f)
	}
	return cmd
}
