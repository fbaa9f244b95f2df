package gates

import (
	"encoding/binary"
	"sort"

	"github.com/ideate/git-ideate/internal/symbols"
)

// The structure cache's entries are written in a small binary form of
// their own: varints and length-prefixed strings in a fixed field order.
// encoding/gob would cost every git-ideate process its package init
// (0.2–0.8 ms of start-up) and JSON triples the warm check's time. The
// field lists below are held equal to the structs by
// TestFactsCodec_CoversEveryField: a field added to symbols.File,
// symbols.Symbol or bodyFacts fails it until the codec writes it.

type factsEnc struct{ b []byte }

func (e *factsEnc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *factsEnc) int(v int)     { e.b = binary.AppendVarint(e.b, int64(v)) }
func (e *factsEnc) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *factsEnc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *factsEnc) entry(x factsEntry) {
	e.str(x.Path)
	e.b = append(e.b, x.Blob[:]...)
	f := x.File
	e.str(f.Path)
	e.str(string(f.Lang))
	e.str(f.Package)
	e.bool(f.Generated)
	e.bool(f.Test)
	e.bool(f.Weaker)
	e.str(f.ParseError)
	e.uint(uint64(len(f.Defs)))
	for _, s := range f.Defs {
		e.str(string(s.Lang))
		e.str(s.Dir)
		e.str(s.Package)
		e.str(s.Receiver)
		e.str(s.Name)
		e.str(string(s.Kind))
		e.str(s.File)
		e.int(s.Line)
		e.int(s.Start)
		e.int(s.End)
		e.int(s.BodyStart)
		e.int(s.BodyEnd)
		e.bool(s.Exported)
		e.bool(s.Decorated)
		e.bool(s.Test)
		e.bool(s.Weaker)
		e.str(s.Sig)
	}
	names := make([]string, 0, len(f.Refs))
	for n := range f.Refs {
		names = append(names, n)
	}
	sort.Strings(names)
	e.uint(uint64(len(names)))
	for _, n := range names {
		e.str(n)
		e.int(f.Refs[n])
	}
	e.uint(uint64(len(x.Bodies)))
	for _, bf := range x.Bodies {
		e.uint(bf.Hash)
		e.int(bf.N)
		for _, l := range [][]uint32{bf.Norm, bf.Idents} {
			e.uint(uint64(len(l)))
			for _, v := range l {
				e.uint(uint64(v))
			}
		}
	}
}

// factsDec reads what factsEnc wrote; bad is set at the first byte that
// does not fit, and every later read returns zero.
type factsDec struct {
	b   []byte
	bad bool
}

func (d *factsDec) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *factsDec) int() int {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// count is a length that must fit in what is left (each element takes at
// least one byte), so a damaged length cannot allocate without bound.
func (d *factsDec) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return 0
	}
	return int(n)
}

func (d *factsDec) str() string {
	n := d.count()
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *factsDec) bool() bool {
	if len(d.b) == 0 || d.b[0] > 1 {
		d.bad, d.b = true, nil
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *factsDec) entry() factsEntry {
	var x factsEntry
	x.Path = d.str()
	if len(d.b) < len(x.Blob) {
		d.bad, d.b = true, nil
		return x
	}
	copy(x.Blob[:], d.b)
	d.b = d.b[len(x.Blob):]
	f := &symbols.File{}
	f.Path = d.str()
	f.Lang = symbols.Lang(d.str())
	f.Package = d.str()
	f.Generated = d.bool()
	f.Test = d.bool()
	f.Weaker = d.bool()
	f.ParseError = d.str()
	if n := d.count(); n > 0 {
		f.Defs = make([]symbols.Symbol, n)
		for i := range f.Defs {
			s := &f.Defs[i]
			s.Lang = symbols.Lang(d.str())
			s.Dir = d.str()
			s.Package = d.str()
			s.Receiver = d.str()
			s.Name = d.str()
			s.Kind = symbols.Kind(d.str())
			s.File = d.str()
			s.Line = d.int()
			s.Start = d.int()
			s.End = d.int()
			s.BodyStart = d.int()
			s.BodyEnd = d.int()
			s.Exported = d.bool()
			s.Decorated = d.bool()
			s.Test = d.bool()
			s.Weaker = d.bool()
			s.Sig = d.str()
		}
	}
	n := d.count()
	f.Refs = make(map[string]int, n)
	for i := 0; i < n; i++ {
		k := d.str()
		f.Refs[k] = d.int()
	}
	x.File = f
	if n := d.count(); n > 0 {
		x.Bodies = make([]bodyFacts, n)
		for i := range x.Bodies {
			bf := &x.Bodies[i]
			bf.Hash = d.uint()
			bf.N = d.int()
			for _, l := range []*[]uint32{&bf.Norm, &bf.Idents} {
				if m := d.count(); m > 0 {
					*l = make([]uint32, m)
					for j := range *l {
						(*l)[j] = uint32(d.uint())
					}
				}
			}
		}
	}
	return x
}

// encodeFacts is the entries in the cache's binary form.
func encodeFacts(es []factsEntry) []byte {
	e := &factsEnc{}
	e.uint(uint64(len(es)))
	for _, x := range es {
		e.entry(x)
	}
	return e.b
}

// decodeFacts reads encodeFacts' form; ok is false when anything in it
// does not fit (the cache is then ignored).
func decodeFacts(b []byte) (es []factsEntry, ok bool) {
	d := &factsDec{b: b}
	n := d.count()
	es = make([]factsEntry, 0, n)
	for i := 0; i < n && !d.bad; i++ {
		es = append(es, d.entry())
	}
	if d.bad || len(d.b) != 0 {
		return nil, false
	}
	return es, true
}
