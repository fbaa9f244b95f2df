package odb

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/gitstore/oid"
)

// ---- a tiny pack writer, for packs git would never produce ----

type pbEntry struct {
	hash oid.Hash
	off  uint64
	crc  uint32
}

type packBuilder struct {
	buf     bytes.Buffer
	entries []pbEntry
}

func newPackBuilder(n int) *packBuilder {
	b := &packBuilder{}
	b.buf.WriteString("PACK")
	binary.Write(&b.buf, binary.BigEndian, uint32(2))
	binary.Write(&b.buf, binary.BigEndian, uint32(n))
	return b
}

func objectHash(typ oid.ObjectType, data []byte) oid.Hash {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	var out oid.Hash
	copy(out[:], h.Sum(nil))
	return out
}

func zlibBytes(data []byte) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	w.Close()
	return z.Bytes()
}

// add appends an entry of pack type typ; for deltas, prefix is the encoded
// base reference and payload the delta. It returns the entry offset.
func (b *packBuilder) add(name oid.Hash, typ byte, prefix, payload []byte) uint64 {
	off := uint64(b.buf.Len())
	var ent bytes.Buffer
	size := uint64(len(payload))
	c := typ<<4 | byte(size&0x0f)
	size >>= 4
	for size > 0 {
		ent.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	ent.WriteByte(c)
	ent.Write(prefix)
	ent.Write(zlibBytes(payload))
	b.entries = append(b.entries, pbEntry{name, off, crc32.ChecksumIEEE(ent.Bytes())})
	b.buf.Write(ent.Bytes())
	return off
}

func ofsPrefix(rel uint64) []byte {
	var tmp [16]byte
	i := len(tmp) - 1
	tmp[i] = byte(rel & 0x7f)
	for rel >>= 7; rel > 0; rel >>= 7 {
		rel--
		i--
		tmp[i] = 0x80 | byte(rel&0x7f)
	}
	return tmp[i:]
}

// bytes returns the finished pack and its v2 index.
func (b *packBuilder) bytes() (packData, idxData []byte) {
	sum := sha1.Sum(b.buf.Bytes())
	packData = append(append([]byte(nil), b.buf.Bytes()...), sum[:]...)
	ents := append([]pbEntry(nil), b.entries...)
	sort.Slice(ents, func(i, j int) bool { return bytes.Compare(ents[i].hash[:], ents[j].hash[:]) < 0 })
	var idx bytes.Buffer
	idx.WriteString(idxMagic)
	binary.Write(&idx, binary.BigEndian, uint32(2))
	for i := 0; i < 256; i++ {
		n := sort.Search(len(ents), func(k int) bool { return int(ents[k].hash[0]) > i })
		binary.Write(&idx, binary.BigEndian, uint32(n))
	}
	for _, e := range ents {
		idx.Write(e.hash[:])
	}
	for _, e := range ents {
		binary.Write(&idx, binary.BigEndian, e.crc)
	}
	for _, e := range ents {
		binary.Write(&idx, binary.BigEndian, uint32(e.off))
	}
	idx.Write(sum[:])
	isum := sha1.Sum(idx.Bytes())
	idx.Write(isum[:])
	return packData, idx.Bytes()
}

// write stores the pack in objects/pack and returns its base path.
func (b *packBuilder) write(tb testing.TB, objects string) string {
	tb.Helper()
	packData, idxData := b.bytes()
	base := filepath.Join(objects, "pack", "pack-"+hex.EncodeToString(packData[len(packData)-20:]))
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(base+".pack", packData, 0o444); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(base+".idx", idxData, 0o444); err != nil {
		tb.Fatal(err)
	}
	return base
}

// ---- a tiny delta encoder ----

func deltaVarintBytes(v uint64) []byte {
	var out []byte
	for v >= 0x80 {
		out = append(out, byte(v)|0x80)
		v >>= 7
	}
	return append(out, byte(v))
}

type deltaOp struct {
	copyOff, copyLen uint32 // copy when insert == nil
	insert           []byte
}

func encodeDelta(src, dst uint64, ops ...deltaOp) []byte {
	out := append(deltaVarintBytes(src), deltaVarintBytes(dst)...)
	for _, op := range ops {
		if op.insert != nil {
			out = append(out, byte(len(op.insert)))
			out = append(out, op.insert...)
			continue
		}
		cmd := byte(0x80)
		var args []byte
		for i := 0; i < 4; i++ {
			if v := byte(op.copyOff >> (8 * i)); v != 0 {
				cmd |= 1 << i
				args = append(args, v)
			}
		}
		n := op.copyLen
		if n == 0x10000 {
			n = 0
		}
		for i := 0; i < 3; i++ {
			if v := byte(n >> (8 * i)); v != 0 {
				cmd |= 0x10 << i
				args = append(args, v)
			}
		}
		out = append(append(out, cmd), args...)
	}
	return out
}

// ---- tests ----

func writeLoose(tb testing.TB, objects string, typ oid.ObjectType, data []byte) oid.Hash {
	tb.Helper()
	h := objectHash(typ, data)
	raw := zlibBytes(append([]byte(fmt.Sprintf("%s %d\x00", typ, len(data))), data...))
	p := loosePath(objects, h)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, raw, 0o444); err != nil {
		tb.Fatal(err)
	}
	return h
}

func TestHandmadeDeltas(t *testing.T) {
	objects := t.TempDir()
	base := []byte(strings.Repeat("0123456789abcdef", 5000)) // 80,000 bytes
	looseBase := writeLoose(t, objects, oid.BlobObject, base)

	// Pack A: a REF_DELTA on a loose base, an OFS_DELTA on top of it, and
	// a full object used as a cross-pack REF_DELTA base.
	want1 := append(append([]byte("head:"), base[10:10+0x10000]...), base[:5]...)
	d1 := encodeDelta(uint64(len(base)), uint64(len(want1)),
		deltaOp{insert: []byte("head:")}, deltaOp{copyOff: 10, copyLen: 0x10000}, deltaOp{copyOff: 0, copyLen: 5})
	h1 := objectHash(oid.BlobObject, want1)
	want2 := append(append([]byte(nil), want1[:100]...), "tail"...)
	h2 := objectHash(oid.BlobObject, want2)
	d2 := encodeDelta(uint64(len(want1)), uint64(len(want2)), deltaOp{copyOff: 0, copyLen: 100}, deltaOp{insert: []byte("tail")})
	full := []byte("a full blob in pack A\n")
	hFull := objectHash(oid.BlobObject, full)

	pa := newPackBuilder(3)
	off1 := pa.add(h1, typRefDelta, looseBase[:], d1)
	off2 := uint64(pa.buf.Len())
	pa.add(h2, typOfsDelta, ofsPrefix(off2-off1), d2)
	pa.add(hFull, typBlob, nil, full)
	pa.write(t, objects)

	// Pack B: REF_DELTA whose base lives in pack A.
	want3 := []byte("a full blob in pack B\n")
	h3 := objectHash(oid.BlobObject, want3)
	d3 := encodeDelta(uint64(len(full)), uint64(len(want3)), deltaOp{copyOff: 0, copyLen: 20}, deltaOp{insert: []byte("B\n")})
	pb := newPackBuilder(1)
	pb.add(h3, typRefDelta, hFull[:], d3)
	pb.write(t, objects)

	db := openDB(t, objects)
	for _, c := range []struct {
		h    oid.Hash
		want []byte
	}{{h1, want1}, {h2, want2}, {hFull, full}, {h3, want3}, {looseBase, base}, {h2, want2}, {h1, want1}} {
		typ, got, err := db.Read(c.h)
		if err != nil {
			t.Fatalf("Read %s: %v", c.h, err)
		}
		if typ != oid.BlobObject || !bytes.Equal(got, c.want) {
			t.Fatalf("Read %s: wrong content (%d bytes, want %d)", c.h, len(got), len(c.want))
		}
		got[0] ^= 0xff // callers may scribble on results without harming the cache
	}
}

func TestDeltaCycleAndBadDelta(t *testing.T) {
	objects := t.TempDir()
	var ha, hb, hc, hd, nowhere oid.Hash
	ha[0], hb[0], hc[0], hd[0], nowhere[0] = 1, 2, 3, 4, 5
	small := encodeDelta(3, 3, deltaOp{insert: []byte("abc")})
	p := newPackBuilder(5)
	p.add(hd, typRefDelta, nowhere[:], small) // base exists nowhere
	p.add(ha, typRefDelta, hb[:], small)      // a -> b -> a
	p.add(hb, typRefDelta, ha[:], small)
	base := []byte("base object")
	hBase := objectHash(oid.BlobObject, base)
	p.add(hBase, typBlob, nil, base)
	// c copies beyond its base.
	p.add(hc, typRefDelta, hBase[:], encodeDelta(uint64(len(base)), 20, deltaOp{copyOff: 5, copyLen: 20}))
	pbase := p.write(t, objects)

	db := openDB(t, objects)
	_, _, err := db.Read(ha)
	if err == nil || !strings.Contains(err.Error(), "delta chain longer") {
		t.Fatalf("cycle: err = %v", err)
	}
	_, _, err = db.Read(hc)
	if err == nil || !strings.Contains(err.Error(), pbase+".pack") || !strings.Contains(err.Error(), "exceeds base") {
		t.Fatalf("bad delta: err = %v", err)
	}
	if errors.Is(err, ErrNotFound) {
		t.Fatalf("corruption reported as not found: %v", err)
	}
	if _, _, err = db.Read(hd); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Fatalf("missing base: err = %v", err)
	}
	if _, got, err := db.Read(hBase); err != nil || string(got) != string(base) {
		t.Fatalf("good object next to bad ones: %v", err)
	}
}

// packedRepo builds a small packed repository and returns its objects dir,
// the pack base path and git's view of all objects.
func packedRepo(t *testing.T) (string, string, []catObject) {
	t.Helper()
	repo := initRepo(t, t.TempDir())
	deepHistory(t, repo, 40, "main")
	runGit(t, repo, nil, "repack", "-adfq", "--depth=50", "--window=50")
	objs := allObjects(t, repo)
	pk := packFiles(t, objectsDir(repo))[0]
	return objectsDir(repo), strings.TrimSuffix(pk, ".pack"), objs
}

func rewrite(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, f(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptFiles(t *testing.T) {
	cases := []struct {
		name    string
		file    string // "idx" or "pack"
		mutate  func([]byte) []byte
		wantMsg string
	}{
		{"truncated idx", "idx", func(b []byte) []byte { return b[:len(b)/2] }, "truncated"},
		{"tiny idx", "idx", func(b []byte) []byte { return b[:10] }, "truncated"},
		{"idx v1", "idx", func(b []byte) []byte { b[0] = 0; return b }, "bad magic"},
		{"idx v3", "idx", func(b []byte) []byte { b[7] = 3; return b }, "version 3"},
		{"idx fanout", "idx", func(b []byte) []byte { b[8+4*100+2] = 0xff; return b }, "fanout"},
		{"idx odd size", "idx", func(b []byte) []byte { return append(b, 1, 2, 3) }, "invalid size"},
		{"garbage pack", "pack", func(b []byte) []byte {
			rand.New(rand.NewSource(1)).Read(b)
			return b
		}, "bad signature"},
		{"pack version", "pack", func(b []byte) []byte { b[7] = 9; return b }, "version 9"},
		{"pack count", "pack", func(b []byte) []byte { b[11]++; return b }, "objects"},
		{"truncated pack", "pack", func(b []byte) []byte { return b[:len(b)-100] }, "checksum"},
		{"empty pack", "pack", func(b []byte) []byte { return nil }, "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objects, base, objs := packedRepo(t)
			path := base + "." + c.file
			rewrite(t, path, c.mutate)
			db := openDB(t, objects)
			_, _, err := db.Read(objs[0].hash)
			if err == nil {
				t.Fatal("Read succeeded on corrupt pack")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.wantMsg) {
				t.Fatalf("error does not name %s / %q: %v", path, c.wantMsg, err)
			}
		})
	}
}

func TestCorruptEntries(t *testing.T) {
	objects, base, objs := packedRepo(t)
	// Scribble over the entry area (keeping header and trailer).
	rewrite(t, base+".pack", func(b []byte) []byte {
		r := rand.New(rand.NewSource(7))
		for i := 0; i < 200; i++ {
			b[12+r.Intn(len(b)-32)] ^= byte(1 + r.Intn(255))
		}
		return b
	})
	db := openDB(t, objects)
	bad := 0
	for _, o := range objs {
		_, data, err := db.Read(o.hash)
		if err != nil {
			bad++
			if !strings.Contains(err.Error(), base+".pack") {
				t.Fatalf("error does not name the pack: %v", err)
			}
			if errors.Is(err, ErrNotFound) {
				t.Fatalf("corruption reported as not found: %v", err)
			}
			continue
		}
		_ = data // an undamaged entry, or damage zlib/adler did not catch
	}
	if bad == 0 {
		t.Fatal("no corruption detected")
	}
	t.Logf("%d of %d objects unreadable", bad, len(objs))
}

func TestBadLargeOffset(t *testing.T) {
	objects, base, objs := packedRepo(t)
	db0 := openDB(t, objects)
	db0.Read(objs[0].hash)
	db0.mu.RLock()
	n := db0.stores[0].packs[0].n
	db0.mu.RUnlock()
	rewrite(t, base+".idx", func(b []byte) []byte {
		offs := 8 + 1024 + n*24
		for i := 0; i < n; i++ {
			binary.BigEndian.PutUint32(b[offs+4*i:], 0x80000000|uint32(i))
		}
		return b
	})
	db := openDB(t, objects)
	_, _, err := db.Read(objs[0].hash)
	if err == nil || !strings.Contains(err.Error(), "large offset") {
		t.Fatalf("err = %v", err)
	}
}

func TestCorruptLoose(t *testing.T) {
	objects := t.TempDir()
	good := writeLoose(t, objects, oid.BlobObject, []byte("hello\n"))
	cases := map[string][]byte{
		"not zlib":      []byte("garbage garbage garbage"),
		"unknown type":  zlibBytes([]byte("blorb 3\x00abc")),
		"size mismatch": zlibBytes([]byte("blob 4\x00abc")),
		"too long":      zlibBytes([]byte("blob 2\x00abc")),
		"no nul":        zlibBytes([]byte("blob 3")),
		"bad size":      zlibBytes([]byte("blob 0x3\x00abc")),
		"leading zero":  zlibBytes([]byte("blob 03\x00abc")),
		"long header":   zlibBytes([]byte("blob " + strings.Repeat("1", 40) + "\x00")),
		"truncated":     zlibBytes([]byte("blob 3\x00abc"))[:8],
		"huge size":     zlibBytes([]byte("blob 9999999999999\x00abc")),
	}
	db := openDB(t, objects)
	i := 0
	for name, raw := range cases {
		i++
		var h oid.Hash
		h[0], h[1] = 0x42, byte(i)
		p := loosePath(objects, h)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := db.Read(h)
		if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, data, err := db.Read(good); err != nil || string(data) != "hello\n" {
		t.Fatalf("good loose object: %v", err)
	}
}

// ---- delta applier ----

// refApplyDelta is a deliberately naive second implementation used as an
// oracle for the fuzzer.
func refApplyDelta(base, delta []byte) ([]byte, bool) {
	pos := 0
	readSize := func() (uint64, bool) {
		var v uint64
		for shift := 0; pos < len(delta); shift += 7 {
			c := delta[pos]
			pos++
			if shift >= 64 {
				return 0, false
			}
			if shift > 57 && uint64(c&0x7f)>>(64-shift) != 0 {
				return 0, false
			}
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				return v, true
			}
		}
		return 0, false
	}
	src, ok := readSize()
	if !ok || src != uint64(len(base)) {
		return nil, false
	}
	dst, ok := readSize()
	if !ok {
		return nil, false
	}
	var out []byte
	for pos < len(delta) {
		c := delta[pos]
		pos++
		if c == 0 {
			return nil, false
		}
		if c < 0x80 {
			if pos+int(c) > len(delta) {
				return nil, false
			}
			out = append(out, delta[pos:pos+int(c)]...)
			pos += int(c)
		} else {
			var off, n uint64
			for bit := 0; bit < 7; bit++ {
				if c&(1<<bit) == 0 {
					continue
				}
				if pos >= len(delta) {
					return nil, false
				}
				if bit < 4 {
					off += uint64(delta[pos]) << (8 * bit)
				} else {
					n += uint64(delta[pos]) << (8 * (bit - 4))
				}
				pos++
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) {
				return nil, false
			}
			out = append(out, base[off:off+n]...)
		}
		if uint64(len(out)) > dst {
			return nil, false
		}
	}
	if uint64(len(out)) != dst {
		return nil, false
	}
	return out, true
}

func deltaSeeds() [][2][]byte {
	base := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz", 3000)) // 78,000 bytes
	return [][2][]byte{
		{[]byte("hello"), encodeDelta(5, 11, deltaOp{copyOff: 0, copyLen: 5}, deltaOp{insert: []byte(" world")})},
		{base, encodeDelta(uint64(len(base)), 0x10000+3, deltaOp{copyOff: 1, copyLen: 0x10000}, deltaOp{insert: []byte("xyz")})},
		{base, encodeDelta(uint64(len(base)), 10, deltaOp{copyOff: 0x10203, copyLen: 10})},
		{nil, encodeDelta(0, 0)},
		{nil, encodeDelta(0, 3, deltaOp{insert: []byte("new")})},
		{[]byte("abc"), encodeDelta(3, 4, deltaOp{copyOff: 1, copyLen: 4})},   // out of bounds
		{[]byte("abc"), encodeDelta(4, 3, deltaOp{copyOff: 0, copyLen: 3})},   // wrong base size
		{[]byte("abc"), encodeDelta(3, 2, deltaOp{copyOff: 0, copyLen: 3})},   // overflows result
		{[]byte("abc"), encodeDelta(3, 9, deltaOp{copyOff: 0, copyLen: 3})},   // short result
		{[]byte("abc"), append(encodeDelta(3, 3), 0)},                         // reserved op
		{[]byte("abc"), append(encodeDelta(3, 3), 0x91)},                      // truncated copy
		{[]byte("abc"), append(encodeDelta(3, 3), 5, 'a')},                    // truncated insert
		{[]byte("abc"), {0x83}},                                               // truncated header
		{[]byte("abc"), append([]byte{3}, bytes.Repeat([]byte{0xff}, 12)...)}, // size overflow
		{[]byte("abc"), {3, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x90, 0x10}},        // huge result
	}
}

func TestApplyDelta(t *testing.T) {
	for i, s := range deltaSeeds() {
		got, err := applyDelta(s[0], s[1])
		want, ok := refApplyDelta(s[0], s[1])
		if (err == nil) != ok || !bytes.Equal(got, want) {
			t.Errorf("seed %d: applyDelta = %q, %v; reference = %q, %v", i, trunc(got), err, trunc(want), ok)
		}
		if i < 5 && err != nil {
			t.Errorf("seed %d: valid delta rejected: %v", i, err)
		}
		if i >= 5 && err == nil {
			t.Errorf("seed %d: invalid delta accepted", i)
		}
	}
}

func trunc(b []byte) []byte {
	if len(b) > 20 {
		return b[:20]
	}
	return b
}

func FuzzApplyDelta(f *testing.F) {
	for _, s := range deltaSeeds() {
		if len(s[0]) > 4096 { // big inputs make the fuzzer's minimiser crawl
			continue
		}
		f.Add(s[0], s[1])
	}
	f.Add([]byte("0123456789"), encodeDelta(10, 12, deltaOp{copyOff: 2, copyLen: 8}, deltaOp{insert: []byte("abcd")}))
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		got, err := applyDelta(base, delta)
		want, ok := refApplyDelta(base, delta)
		if (err == nil) != ok {
			t.Fatalf("applyDelta err = %v, reference ok = %v", err, ok)
		}
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("applyDelta result differs from reference")
		}
	})
}

// memDB wraps an in-memory pack (not mapped) in a DB, for fuzzing.
func memDB(idxData, packData []byte) (*DB, error) {
	p := &pack{id: 1, base: "mem", idxPath: "mem.idx", packPath: "mem.pack", idx: idxData, data: packData}
	if err := p.parseIdx(); err != nil {
		return nil, err
	}
	p.idxOnce.Do(func() {})
	if err := p.checkPack(); err != nil {
		return nil, err
	}
	p.dataOnce.Do(func() {})
	db := &DB{cache: newBaseCache(1 << 20), scanned: true}
	db.stores = []*store{{dir: "/nonexistent-odb-fuzz", packs: []*pack{p}}}
	return db, nil
}

func fuzzPackSeed() ([]byte, []byte, []oid.Hash) {
	base := []byte(strings.Repeat("some base text. ", 40))
	hb := objectHash(oid.BlobObject, base)
	want1 := append(append([]byte(nil), base[:50]...), "!"...)
	h1 := objectHash(oid.BlobObject, want1)
	want2 := append(append([]byte(nil), want1[:20]...), "?"...)
	h2 := objectHash(oid.BlobObject, want2)
	p := newPackBuilder(3)
	offb := p.add(hb, typBlob, nil, base)
	off1 := uint64(p.buf.Len())
	p.add(h1, typOfsDelta, ofsPrefix(off1-offb), encodeDelta(uint64(len(base)), uint64(len(want1)), deltaOp{copyLen: 50}, deltaOp{insert: []byte("!")}))
	p.add(h2, typRefDelta, h1[:], encodeDelta(uint64(len(want1)), uint64(len(want2)), deltaOp{copyLen: 20}, deltaOp{insert: []byte("?")}))
	packData, idxData := p.bytes()
	return packData, idxData, []oid.Hash{hb, h1, h2}
}

func TestMemPackSeed(t *testing.T) {
	packData, idxData, hashes := fuzzPackSeed()
	db, err := memDB(idxData, packData)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes {
		if _, data, err := db.Read(h); err != nil || objectHash(oid.BlobObject, data) != h {
			t.Fatalf("Read %s: %v", h, err)
		}
	}
}

// FuzzPackBytes flips bytes of a small pack (and its index) and checks that
// reading never panics.
func FuzzPackBytes(f *testing.F) {
	f.Add(uint16(12), byte(0xff), uint16(0), byte(0))
	f.Add(uint16(13), byte(0x80), uint16(300), byte(1))
	f.Add(uint16(40), byte(0x01), uint16(1100), byte(7))
	f.Add(uint16(0), byte(0), uint16(1040), byte(0x80))
	f.Fuzz(func(t *testing.T, packPos uint16, packXor byte, idxPos uint16, idxXor byte) {
		packData, idxData, hashes := fuzzPackSeed()
		packData[int(packPos)%len(packData)] ^= packXor
		idxData[int(idxPos)%len(idxData)] ^= idxXor
		db, err := memDB(idxData, packData)
		if err != nil {
			return
		}
		for _, h := range hashes {
			db.Read(h)
		}
	})
}
