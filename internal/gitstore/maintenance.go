package gitstore

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ideate/git-ideate/internal/osproc"
	"github.com/ideate/git-ideate/internal/shell"
)

// maintenance keeps the repository healthy without user action. Past
// gc.auto loose objects (git's estimate: entries in objects/17 × 256) a
// commit starts a detached `git pack-objects` of every loose object, or,
// past gc.autoPackLimit packs, `git repack -A -d`, `git prune` and `git
// pack-refs`; never `git gc --auto`, whose gc.log after a burst of appends
// stops every later auto gc for a day. Small packs are rolled up as `git
// repack --geometric=2` would choose them. One lock keeps two jobs apart.
//
// Nothing is deleted after a call has answered: a reader that lists files
// and opens them later (`git fsck` beside `git repack -d`) reports missing
// objects. So background jobs delete nothing and leave a mark, and the
// next commit deletes (prune-packed, the merged packs) before it returns,
// never while a git gc runs (see gcRunning); the full repack is waited
// for by the commit that started it. Jobs run in a session of their own
// (detached): killed half-way they would leave temporary packs.
type maintenance struct {
	enabled   bool
	threshold int64
	store     *Store

	mu      sync.Mutex
	written int
	checked bool
	packs   int // packs this process wrote since it last counted them
	// listed is the pack count of the last listing of objects/pack (-1:
	// none yet), mergeable how many a roll-up would have merged,
	// sinceListed the packs written since: objects/pack is listed again
	// only when mergeable and new packs together reach rollUpAt.
	listed, mergeable, sinceListed int
	// child is closed when this process's last job has ended (nil: none).
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

// rollUpAt is the number of packs a roll-up merges at the least.
const rollUpAt = 16

// PacksAtMost is the pack count past which a commit waits (bounded by ctx)
// for its own process's roll-up rather than add another pack: a burst of
// in-process commits outruns a roll-up, and every read searches every pack.
const PacksAtMost = 8 * rollUpAt

// waitRollUp waits until child, this process's roll-up, has ended or ctx
// is done, then deletes the packs it merged.
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

// committed runs after a commit: it finishes what a background job left,
// starts a repack or roll-up when one is due, and waits for a full repack.
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
		if done := m.spawn(); done != nil {
			select {
			case <-done:
			case <-ctx.Done():
			}
		}
		return
	}
	m.mu.Lock()
	if due {
		m.checked, m.written = true, 0
	}
	m.sinceListed += packs
	mayRollUp := m.listed < 0 || m.mergeable+m.sinceListed >= rollUpAt
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
}

// finishRepack runs `git prune-packed` once after a background repack
// (of two committers, the one whose rename takes the mark).
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
		return // it may yet delete the new pack's index (see gcRunning)
	}
	if _, err := take(mark); err == nil {
		_ = m.store.git(ctx, "prune-packed", "-q").Run()
	}
}

// needed applies git's own test (builtin/gc.c): more than
// ceil(gc.auto/256) loose objects in objects/17.
func (m *maintenance) needed() bool {
	return int64(len(dirNames(filepath.Join(m.store.repo.CommonDir, "objects", "17")))) > (m.threshold+255)/256
}

// dirNames lists the names in dir, none when it cannot be read.
func dirNames(dir string) []string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	return names
}

// countPacks counts the pack files among names.
func countPacks(names []string) int {
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".pack") {
			n++
		}
	}
	return n
}

// spawn starts a repack unless a job is running. For a full repack it
// returns a channel closed when it has exited; for the usual one, which
// deletes nothing, nil (as when none was started).
func (m *maintenance) spawn() <-chan struct{} {
	gd := shell.Quote(m.store.repo.CommonDir)
	if countPacks(dirNames(filepath.Join(m.store.repo.CommonDir, "objects", "pack"))) > int(m.store.cfg.Int("gc", "autopacklimit", 50)) {
		// -A, not -a: a write in flight's objects are not reachable yet;
		// -A keeps them loose for prune's grace period, as git gc does.
		return m.startJob("repack", "git --git-dir="+gd+" repack -A -d -q && git --git-dir="+gd+
			" prune --expire=1.hour.ago && git --git-dir="+gd+" pack-refs --all")
	}
	// Every loose object by name: `git repack` without -a stops at commits
	// already packed and would miss loose objects they reach.
	objs := shell.Quote(filepath.Join(m.store.repo.CommonDir, "objects"))
	m.startJob("repack", "cd "+objs+" && find ?? -type f | grep -E '^[0-9a-f]{2}/[0-9a-f]{38}$' | tr -d / | git --git-dir="+gd+
		" pack-objects -q pack/pack > /dev/null && : > "+shell.Quote(filepath.Join(m.store.repo.StateDir(), "repacked")))
	return nil
}

// startJob runs script in a detached shell under the maintenance lock
// (its first line names the job); nil when another job holds the lock.
// The shell and all it starts inherit the lock's flock, so a killed job's
// lock is broken as a ref's is (unheld, older than DefaultStaleAfter). The
// shell removes last, then the lock; the channel closes when it has ended.
func (m *maintenance) startJob(job, script string, last ...string) <-chan struct{} {
	lock := filepath.Join(m.store.repo.StateDir(), "maintenance.lock")
	f, err := acquireLock(context.Background(), lock, LockPolicy{StaleAfter: DefaultStaleAfter})
	if err != nil {
		return nil
	}
	defer f.Close()
	f.WriteString(job + "\n")
	rm := "; rm -f"
	for _, p := range append(last, lock) {
		rm += " " + shell.Quote(p)
	}
	cmd := detached(context.Background(), "sh", "-c", "("+script+")"+rm)
	if runtime.GOOS != "windows" { // which passes no open file: its lock goes by age
		cmd.ExtraFiles = []*os.File{f}
	}
	if err := cmd.Start(); err != nil {
		os.Remove(lock)
		return nil
	}
	f.WriteString("pid " + strconv.Itoa(cmd.Process.Pid) + "\n")
	done := make(chan struct{})
	m.mu.Lock()
	m.child = done
	m.mu.Unlock()
	go func() {
		defer close(done)
		cmd.Wait()
	}()
	return done
}

// looseRefs counts the entries of prefix's directory (one directory read).
func (s *Store) looseRefs(prefix string) int { return len(dirNames(s.refs.dirOf(prefix))) }

// PackRefsNow runs `git pack-refs --all` and waits for it when one of the
// prefixes' directories holds more than threshold loose refs (a sync that
// created thousands), even with maintenance off.
func (s *Store) PackRefsNow(ctx context.Context, threshold int, prefixes ...string) bool {
	for _, p := range prefixes {
		if s.looseRefs(p) > threshold {
			_, err := s.gitToEnd(ctx, nil, nil, "pack-refs", "--all")
			return err == nil
		}
	}
	return false
}

// packRefsEvery is the least time between two background pack-refs: every
// claim lists the board's items, so a burst of writes is packed soon.
const packRefsEvery = 250 * time.Millisecond

// PackRefsIfLoose starts a detached `git pack-refs --all` when prefix's
// directory holds more than threshold loose refs, so board items stay
// cheap to list. A caller already cancelled starts nothing.
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
	if !touch(stamp) {
		return
	}
	cmd := detached(context.WithoutCancel(ctx), "git", "--git-dir="+s.repo.CommonDir, "pack-refs", "--all")
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// running reports whether a maintenance job holds the lock (a stale lock
// is broken on the way).
func (m *maintenance) running() bool {
	return !breakStaleLock(filepath.Join(m.store.repo.StateDir(), "maintenance.lock"), DefaultStaleAfter)
}

// rollUpSet chooses the packs a roll-up merges as git repack --geometric=2
// does, by object count (read off the index's size; by bytes, the writes'
// stored trees would outweigh a roll-up's deltified pack and have it
// merged again and again): the largest packs holding at least twice the
// objects of all smaller ones together stay. Nothing while fewer than
// rollUpAt would be merged; never a pack with a .keep.
func (m *maintenance) rollUpSet() (merged []string) {
	dir := filepath.Join(m.store.repo.CommonDir, "objects", "pack")
	if testHookListPacks != nil {
		testHookListPacks()
	}
	ents := dirNames(dir)
	count := countPacks(ents)
	m.mu.Lock()
	m.listed, m.mergeable, m.sinceListed = count, count, 0
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
		// A .keep a killed writer left (a hard link to the pack, see
		// placePack) goes once it is an hour old; a user's .keep stays.
		if base, ok := strings.CutSuffix(e, ".keep"); ok && names[base+".pack"] {
			k, kerr := os.Stat(filepath.Join(dir, e))
			p, perr := os.Stat(filepath.Join(dir, base+".pack"))
			if kerr == nil && perr == nil && time.Since(k.ModTime()) >= time.Hour && os.SameFile(k, p) {
				os.Remove(filepath.Join(dir, e))
			}
		}
		base, ok := strings.CutSuffix(e, ".pack")
		if !ok || !names[base+".idx"] || names[base+".keep"] || names[base+".promisor"] {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, base+".idx")); err == nil {
			// A version 2 index's object count (a little more past 2 GiB
			// of pack), at least 1.
			packs = append(packs, pk{e, max(1, (fi.Size()-int64(idxHead+idxTrailer))/idxPerObject)})
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
	m.mu.Lock()
	m.mergeable = split
	m.mu.Unlock()
	// The large packs the progression keeps do not count toward rollUpAt.
	if split < rollUpAt {
		return nil
	}
	for _, p := range packs[:split] {
		merged = append(merged, p.name)
	}
	return merged
}

// spawnRollUp merges the packs named into one new pack in the background
// (`git pack-objects` of every object their indexes name, reachable or
// not) and deletes nothing: its "rolled-up" mark lists them for the next
// commit (finishRollUp). A failure leaves no mark. The names are read
// here: `--stdin-packs` would have git walk every tree of the store for
// their paths at each roll-up (at 10k records four times the CPU of the
// writes that made the packs).
func (m *maintenance) spawnRollUp(merged []string) {
	dir := m.store.repo.StateDir()
	in, ok := rollUpInput(filepath.Join(m.store.repo.CommonDir, "objects", "pack"), merged)
	// A name of its own: it is written before the job's lock is taken,
	// and a running job may be reading another one.
	input := filepath.Join(dir, "rollup.input-"+strconv.FormatUint(rand.Uint64(), 36))
	if !ok || os.MkdirAll(dir, 0o777) != nil || os.WriteFile(input, in, 0o666) != nil {
		return
	}
	names := ""
	for _, p := range merged {
		names += " " + shell.Quote(p)
	}
	git := "git --git-dir=" + shell.Quote(m.store.repo.CommonDir)
	pack := shell.Quote(filepath.Join(m.store.repo.CommonDir, "objects", "pack", "pack"))
	list, mark := filepath.Join(dir, "rollup.list"), shell.Quote(filepath.Join(dir, "rolled-up"))
	script := "set -e; n=$(" + git + " pack-objects -q --delta-base-offset " + pack + " < " + shell.Quote(input) + ")" +
		"; [ -n \"$n\" ]; printf '%s\\n'" + names + " \"+pack-$n.pack\" > " + shell.Quote(list) + "; mv " + shell.Quote(list) + " " + mark
	if m.startJob("roll-up", script, list, input) == nil {
		os.Remove(input)
	}
}

// rollUpInput is the object names of packs (in pdir), one in hex a line,
// read from their indexes (version 1 or 2); ok is false when one cannot be
// read whole.
func rollUpInput(pdir string, packs []string) (in []byte, ok bool) {
	for _, p := range packs {
		idx, err := osproc.ReadRegular(filepath.Join(pdir, strings.TrimSuffix(p, ".pack")+".idx"), 1<<30)
		if err != nil || len(idx) < idxHead {
			return nil, false
		}
		// Version 2: header, fan-out, the names; version 1: fan-out, then
		// an offset and a name per object.
		start, stride, n := idxHead, 20, int(binary.BigEndian.Uint32(idx[idxHead-4:]))
		need := idxHead + n*idxPerObject + idxTrailer
		if string(idx[:len(idxV2Header)]) != idxV2Header {
			n = int(binary.BigEndian.Uint32(idx[256*4-4:]))
			start, stride, need = 256*4+4, 24, 256*4+n*24+idxTrailer
		}
		if len(idx) < need {
			return nil, false
		}
		for i := 0; i < n; i++ {
			o := start + i*stride
			in = append(hex.AppendEncode(in, idx[o:o+20]), '\n')
		}
	}
	return in, true
}

// finishRollUp deletes the packs a finished roll-up merged, once (the mark
// is taken by rename), index first; only while no git gc runs, and only
// when the new pack its "+pack-<new>.pack" line names is whole.
func (m *maintenance) finishRollUp() {
	dir := m.store.repo.StateDir()
	mark := filepath.Join(dir, "rolled-up")
	if _, err := os.Stat(mark); err != nil || gcRunning(m.store.repo.CommonDir) {
		return
	}
	data, err := take(mark)
	if err != nil {
		return
	}
	pdir := filepath.Join(m.store.repo.CommonDir, "objects", "pack")
	var bases []string
	whole := false
	for _, line := range strings.Split(string(data), "\n") {
		made, isNew := strings.CutPrefix(line, "+")
		base, ok := strings.CutSuffix(made, ".pack")
		if !ok || !strings.HasPrefix(base, "pack-") || strings.ContainsAny(base, "/\\") {
			continue
		}
		base = filepath.Join(pdir, base)
		if !isNew {
			bases = append(bases, base)
			continue
		}
		_, errIdx := os.Stat(base + ".idx")
		_, errPack := os.Stat(base + ".pack")
		whole = errIdx == nil && errPack == nil
	}
	if !whole {
		return
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
