package board

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ideate/git-ideate/internal/gitstore"
)

// The index file, version 2 (board-index.v2; version 1, board-index.v1,
// is left to the binaries that write it). A CLI call reads it without
// parsing it: a claim's open-child check wants one item's children and the
// few items that moved, not the whole board (at 1,000 items, parsing every
// line and every line of packed-refs was a fifth of a claim).
//
//	ideate-board-index 2 <kids> <entries> <tail> <n>   offsets and count, 12 digits each
//	packed	<version>	<id>=<tip>,...	<id>,...     see packedStamp
//	<parent>	<child>,<child>,...                    from <kids>, sorted by parent
//	<entry line>                                   from <entries>, n of them, sorted by id
//	<entry line or packed line>                    from <tail>, appended (appendIndex)
//
// An entry line is version 1's. Later lines stand over earlier ones: an
// entry line in the tail over the sorted one of its id, the last packed
// line over the ones before it. Only whole lines are read (a line being
// appended may be seen in part).
const (
	indexFile   = "board-index.v2"
	indexMagic  = "ideate-board-index 2"
	offsetWidth = 12
	headerLen   = len(indexMagic) + 4*(1+offsetWidth) + 1
)

// packedStamp is what the index knows of packed-refs: at version (a name
// gitstore.RefPartsVersion gave, "" for none), the packed item refs were
// the index file's sorted entries with their tips, less absent, and with
// the tips in diff in place of theirs (diff also names packed refs that
// have no sorted entry). It is relative to the sorted section alone, not
// to the tail, so appending entry lines does not change it.
type packedStamp struct {
	version string
	diff    map[string]gitstore.Hash
	absent  map[string]bool
}

// fileIndex is an index file as read, parsed line by line on demand.
type fileIndex struct {
	kids, sorted string            // the sections, whole lines
	n            int               // entries in sorted
	tail         map[string]string // id → its last line in the tail, parsed on use (tailEntry)
	tailLines    int
	stamp        packedStamp
	fault        atomic.Bool // a line did not parse: the index is rebuilt

	parsedMu sync.Mutex
	parsed   map[string]*entry // of tail
}

// tailEntry is id's entry in the tail, parsed once.
func (f *fileIndex) tailEntry(id string) (*entry, bool) {
	line, ok := f.tail[id]
	if !ok {
		return nil, false
	}
	f.parsedMu.Lock()
	defer f.parsedMu.Unlock()
	if e, ok := f.parsed[id]; ok {
		return e, true
	}
	e := new(entry)
	if !parseEntry(line, e) {
		f.fault.Store(true) // not written by us: the index is rebuilt
		return nil, false
	}
	if f.parsed == nil {
		f.parsed = map[string]*entry{}
	}
	f.parsed[id] = e
	return e, true
}

// lineAt is the whole line of text that holds byte i.
func lineAt(text string, i int) (start, end int) {
	start = strings.LastIndexByte(text[:i], '\n') + 1
	end = len(text)
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		end = i + j
	}
	return start, end
}

// search finds the line of text (sorted lines, each its key and a tab
// first) whose key is key.
func search(text, key string) (string, bool) {
	lo, hi := 0, len(text)
	for lo < hi {
		start, end := lineAt(text, lo+(hi-lo)/2)
		if start < lo {
			start = lo
		}
		line := text[start:end]
		k, _, _ := strings.Cut(line, "\t")
		switch {
		case k == key:
			return line, true
		case key < k:
			hi = start
		default:
			lo = end + 1
		}
	}
	return "", false
}

// sortedEntry is id's entry in the sorted section, or nil. A line that
// does not parse is not taken for a missing item: it marks the index
// faulted, and its reader rebuilds it.
func (f *fileIndex) sortedEntry(id string) (e *entry) {
	func() {
		if line, ok := search(f.sorted, id); ok {
			e = new(entry)
			if !parseEntry(line, e) {
				e = nil
				f.fault.Store(true)
			}
		}
	}()
	return e
}

// get is id's entry: the tail's, else the sorted section's.
func (f *fileIndex) get(id string) *entry {
	if _, ok := f.tail[id]; ok {
		e, _ := f.tailEntry(id)
		return e
	}
	return f.sortedEntry(id)
}

// kidsOf is the entries whose parent is id.
func (f *fileIndex) kidsOf(id string) []*entry {
	var out []*entry
	seen := map[string]bool{}
	func() {
		line, ok := search(f.kids, id)
		if !ok {
			return
		}
		_, list, _ := strings.Cut(line, "\t")
		for kid := range strings.SplitSeq(list, ",") {
			e := f.get(kid)
			if e == nil {
				f.fault.Store(true) // a child the file names but does not hold
				return
			}
			if e.parent == id {
				out = append(out, e)
				seen[kid] = true
			}
		}
	}()
	for kid, line := range f.tail {
		if seen[kid] || parentOf(line) != id {
			continue
		}
		if e, ok := f.tailEntry(kid); ok {
			out = append(out, e)
		}
	}
	return out
}

// all parses every entry: the sorted ones, then the tail over them.
func (f *fileIndex) all() map[string]*entry {
	m := make(map[string]*entry, f.n+len(f.tail))
	func() {
		slab := make([]entry, f.n) // one allocation for every entry
		rest := f.sorted
		for len(rest) > 0 {
			line, next, _ := strings.Cut(rest, "\n")
			rest = next
			if len(slab) == 0 {
				slab = make([]entry, 1)
			}
			e := &slab[0]
			slab = slab[1:]
			if !parseEntry(line, e) {
				f.fault.Store(true) // not written by us: the index is rebuilt
				return
			}
			m[e.id] = e
		}
	}()
	for id := range f.tail {
		if e, ok := f.tailEntry(id); ok {
			m[id] = e
		}
	}
	return m
}

// packedMoved is the item refs packed-refs held at the stamp's version
// whose tip is not the index's (get), sorted by name.
func (f *fileIndex) packedMoved() (moved []gitstore.Ref) {
	for id, h := range f.stamp.diff {
		if e := f.get(id); e == nil || e.tip != h {
			moved = append(moved, gitstore.Ref{Name: ItemsPrefix + id, Hash: h})
		}
	}
	for id := range f.tail {
		if _, ok := f.stamp.diff[id]; ok || f.stamp.absent[id] {
			continue
		}
		e, ok := f.tailEntry(id)
		if !ok {
			continue
		}
		if s := f.sortedEntry(id); s != nil && s.tip != e.tip {
			moved = append(moved, gitstore.Ref{Name: ItemsPrefix + id, Hash: s.tip})
		}
	}
	sort.Slice(moved, func(i, j int) bool { return moved[i].Name < moved[j].Name })
	return moved
}

// packedHas reports whether id's ref is in packed-refs at the stamp's
// version.
func (f *fileIndex) packedHas(id string) bool {
	if _, ok := f.stamp.diff[id]; ok {
		return true
	}
	if f.stamp.absent[id] {
		return false
	}
	found := false
	_, found = search(f.sorted, id)
	return found
}

// parentOf is the parent field of an entry line.
func parentOf(line string) string {
	for range 3 {
		_, line, _ = strings.Cut(line, "\t")
	}
	parent, _, _ := strings.Cut(line, "\t")
	return parent
}

// parseEntry reads one entry line into e.
func parseEntry(line string, e *entry) bool {
	var f [11]string
	n := 0
	for n < 10 {
		i := strings.IndexByte(line, '\t')
		if i < 0 {
			return false
		}
		f[n], line = line[:i], line[i+1:]
		n++
	}
	f[10] = line
	tip, err := gitstore.ParseHash(f[1])
	if err != nil {
		return false
	}
	n2, _ := strconv.Atoi(f[9])
	*e = entry{id: f[0], tip: tip, status: f[2], parent: f[3], createdAt: f[5], lease: f[6],
		refs: f[8], specLen: n2, itemJSON: f[10], tenant: unquoteFast(f[7])}
	if f[4] != "" {
		e.deps = strings.Split(f[4], ",")
	}
	return true
}

func unquoteFast(q string) string {
	if len(q) >= 2 && strings.IndexByte(q, '\\') < 0 {
		return q[1 : len(q)-1]
	}
	var s string
	json.Unmarshal([]byte(q), &s)
	return s
}

// parsePackedLine reads a packed line ("packed" and its three fields).
func parsePackedLine(line string) (packedStamp, bool) {
	parts := strings.Split(line, "\t")
	if len(parts) != 4 || parts[0] != "packed" {
		return packedStamp{}, false
	}
	st := packedStamp{version: parts[1], diff: map[string]gitstore.Hash{}, absent: map[string]bool{}}
	if st.version == "-" {
		st.version = ""
	}
	if parts[2] != "" {
		for d := range strings.SplitSeq(parts[2], ",") {
			id, hex, ok := strings.Cut(d, "=")
			h, err := gitstore.ParseHash(hex)
			if !ok || err != nil {
				return packedStamp{}, false
			}
			st.diff[id] = h
		}
	}
	if parts[3] != "" {
		for id := range strings.SplitSeq(parts[3], ",") {
			st.absent[id] = true
		}
	}
	return st, true
}

// appendPackedLine appends the packed line that says packed (the item
// refs of packed-refs at version) relative to sorted, an iterator over the
// sorted section's ids and tips in id order.
func appendPackedLine(b []byte, version string, packed []gitstore.Ref, sorted func(yield func(id string, tip gitstore.Hash) bool)) []byte {
	if version == "" {
		return append(b, "packed\t-\t\t\n"...)
	}
	b = append(append(append(b, "packed\t"...), version...), '\t')
	var absent []string
	i, first := 0, true
	for id, tip := range sorted {
		for i < len(packed) && packed[i].Name[len(ItemsPrefix):] < id {
			b, first = appendDiff(b, packed[i], first)
			i++
		}
		if i < len(packed) && packed[i].Name[len(ItemsPrefix):] == id {
			if packed[i].Hash != tip {
				b, first = appendDiff(b, packed[i], first)
			}
			i++
			continue
		}
		absent = append(absent, id)
	}
	for ; i < len(packed); i++ {
		b, first = appendDiff(b, packed[i], first)
	}
	b = append(b, '\t')
	b = append(b, strings.Join(absent, ",")...)
	return append(b, '\n')
}

func appendDiff(b []byte, r gitstore.Ref, first bool) ([]byte, bool) {
	if !first {
		b = append(b, ',')
	}
	b = append(append(b, r.Name[len(ItemsPrefix):]...), '=')
	return append(b, r.Hash.String()...), false
}

// sortedIDs iterates over the sorted section's ids and tips.
func (f *fileIndex) sortedIDs(yield func(string, gitstore.Hash) bool) {
	func() {
		rest := f.sorted
		for len(rest) > 0 {
			line, next, _ := strings.Cut(rest, "\n")
			rest = next
			id, after, _ := strings.Cut(line, "\t")
			h, err := gitstore.ParseHash(after[:min(40, len(after))])
			if err != nil {
				f.fault.Store(true) // not an entry line: no packed line is said of it
				return
			}
			if !yield(id, h) {
				return
			}
		}
	}()
}

// indexMax bounds the index file read: one larger than any board makes
// is not read (an empty index: it is only a cache, and is rebuilt).
const indexMax = 1 << 30

// readIndex reads the index file at path; an index that cannot be read is
// an empty one (it is only a cache).
func readIndex(path string) *boardIndex {
	data, err := readCapped(path, indexMax)
	if err != nil {
		return &boardIndex{byID: map[string]*entry{}}
	}
	return parseIndex(data)
}

// readCapped reads the file at path whole, an error past max bytes.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s: over %d bytes", path, max)
	}
	return data, err
}

// parseIndex reads the index file's bytes, which are never changed after:
// every field read from them is a substring of them, nothing is copied.
func parseIndex(data []byte) *boardIndex {
	empty := func() *boardIndex { return &boardIndex{byID: map[string]*entry{}} }
	if len(data) < headerLen {
		return empty()
	}
	text := unsafe.String(&data[0], len(data))
	if !strings.HasPrefix(text, indexMagic+" ") || text[headerLen-1] != '\n' {
		return empty()
	}
	var off [4]int
	for i := range off {
		at := len(indexMagic) + 1 + i*(offsetWidth+1)
		n, err := strconv.Atoi(text[at : at+offsetWidth])
		if err != nil {
			return empty()
		}
		off[i] = n
	}
	whole := strings.LastIndexByte(text, '\n') + 1 // only whole lines
	kids, entries, tail, n := off[0], off[1], off[2], off[3]
	if !(headerLen <= kids && kids <= entries && entries <= tail && tail <= whole) {
		return empty()
	}
	stamp, ok := parsePackedLine(strings.TrimSuffix(text[headerLen:kids], "\n"))
	if !ok {
		return empty()
	}
	f := &fileIndex{kids: text[kids:entries], sorted: text[entries:tail], n: n, stamp: stamp, tail: map[string]string{}}
	rest := text[tail:whole]
	lastPacked := ""
	for len(rest) > 0 {
		line, next, _ := strings.Cut(rest, "\n")
		rest = next
		f.tailLines++
		if strings.HasPrefix(line, "packed\t") {
			lastPacked = line // only the last one counts: parsed once, below
			continue
		}
		id, _, ok := strings.Cut(line, "\t")
		if !ok {
			return empty()
		}
		f.tail[id] = line
	}
	if lastPacked != "" {
		st, ok := parsePackedLine(lastPacked)
		if !ok {
			return empty()
		}
		f.stamp = st
	}
	return &boardIndex{file: f, lines: n + f.tailLines}
}

// writeIndex writes idx whole to path, with what packed (the item refs of
// packed-refs at version, from gitstore.RefPartsVersion) says relative to
// it.
func writeIndex(path string, idx *boardIndex, packed []gitstore.Ref, version string) {
	all := idx.all()
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o777) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".board-index-*")
	if err != nil {
		return
	}
	// Line by line through a small buffer: at 9,000 items the file is
	// about 4 MB, and a long-lived server writes it every few dozen
	// claims; built whole in memory, it set off garbage collections.
	w := bufio.NewWriterSize(tmp, 64<<10)
	pos := headerLen
	put := func(b []byte) { w.Write(b); pos += len(b) }
	w.WriteString(strings.Repeat(" ", headerLen-1) + "\n") // the header, once the offsets are known
	put(appendPackedLine(nil, version, packed, func(yield func(string, gitstore.Hash) bool) {
		for _, id := range ids {
			if !yield(id, all[id].tip) {
				return
			}
		}
	}))
	kidsAt := pos
	kids := map[string][]string{}
	for _, id := range ids {
		if p := all[id].parent; p != "" {
			kids[p] = append(kids[p], id)
		}
	}
	parents := make([]string, 0, len(kids))
	for p := range kids {
		parents = append(parents, p)
	}
	sort.Strings(parents)
	var line []byte
	for _, p := range parents {
		put(append(append(append(line[:0], p...), '\t'), strings.Join(kids[p], ",")+"\n"...))
	}
	entriesAt := pos
	for _, id := range ids {
		line = appendEntry(line[:0], all[id])
		put(line)
	}
	werr := w.Flush()
	header := fmt.Sprintf("%s %0*d %0*d %0*d %0*d\n", indexMagic, offsetWidth, kidsAt, offsetWidth, entriesAt, offsetWidth, pos, offsetWidth, len(ids))
	if werr == nil {
		_, werr = tmp.WriteAt([]byte(header), 0)
	}
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
