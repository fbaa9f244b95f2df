package gates

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ideate/git-ideate/internal/symbols"
)

// fill sets every exported field of the struct v points at to a value
// of its own (n counts up), so a field the codec forgets comes back zero.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		*n++
		switch f.Kind() {
		case reflect.String:
			f.SetString(sf.Name + "-" + string(rune('a'+*n%26)))
		case reflect.Int:
			f.SetInt(int64(*n * 7))
		case reflect.Uint64:
			f.SetUint(uint64(*n) << 40)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			switch f.Type().Elem().Kind() {
			case reflect.Uint32:
				f.Set(reflect.ValueOf([]uint32{uint32(*n), 1 << 31, 0}))
			case reflect.Struct:
				s := reflect.MakeSlice(f.Type(), 2, 2)
				fill(t, s.Index(0), n)
				fill(t, s.Index(1), n)
				f.Set(s)
			default:
				t.Fatalf("%s: a slice of %s the test cannot fill", sf.Name, f.Type().Elem())
			}
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]int{"x": *n, "y": -1}))
		default:
			t.Fatalf("%s: a %s the test cannot fill", sf.Name, f.Kind())
		}
	}
}

// Every exported field of symbols.File, symbols.Symbol and bodyFacts
// survives the cache's codec: a field added to one of them fails here
// until the codec writes it.
func TestFactsCodec_CoversEveryField(t *testing.T) {
	n := 0
	f := &symbols.File{}
	fill(t, reflect.ValueOf(f).Elem(), &n)
	var bodies []bodyFacts
	for i := 0; i < 2; i++ {
		var bf bodyFacts
		fill(t, reflect.ValueOf(&bf).Elem(), &n)
		bodies = append(bodies, bf)
	}
	in := []factsEntry{{Path: "a/b.go", Blob: [20]byte{1, 2, 3, 19: 9}, File: f, Bodies: bodies},
		{Path: "c.py", File: &symbols.File{Refs: map[string]int{}}}}
	out, ok := decodeFacts(encodeFacts(in))
	if !ok {
		t.Fatal("the codec cannot read what it wrote")
	}
	if d := cmp.Diff(in, out, cmp.AllowUnexported(factsEntry{}), cmpopts.IgnoreUnexported(symbols.File{}), cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("round trip (-in +out):\n%s", d)
	}
}

// A damaged encoding is refused, never half read.
func TestFactsCodec_DamagedIsRefused(t *testing.T) {
	f := &symbols.File{Path: "a.go", Defs: []symbols.Symbol{{Name: "F", Line: 3}}, Refs: map[string]int{"G": 2}}
	b := encodeFacts([]factsEntry{{Path: "a.go", File: f, Bodies: []bodyFacts{{Hash: 7, N: 3, Norm: []uint32{1, 2, 3}}}}})
	for cut := 0; cut < len(b); cut++ {
		if _, ok := decodeFacts(b[:cut]); ok {
			t.Fatalf("a cut at %d of %d bytes was read", cut, len(b))
		}
	}
	if _, ok := decodeFacts(append(b, 0)); ok {
		t.Fatal("a trailing byte was read")
	}
	huge := append([]byte{}, b...)
	huge[0] = 0xff // a count far beyond the bytes left
	if _, ok := decodeFacts(huge); ok {
		t.Fatal("an impossible count was read")
	}
}

func FuzzFactsCodec(f *testing.F) {
	sf := &symbols.File{Path: "a.go", Defs: []symbols.Symbol{{Name: "F", Line: 3, Sig: "func F()"}}, Refs: map[string]int{"G": 2}}
	f.Add(encodeFacts([]factsEntry{{Path: "a.go", File: sf, Bodies: []bodyFacts{{Hash: 7, N: 3, Norm: []uint32{1, 2, 3}}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, ok := decodeFacts(b)
		if !ok {
			return
		}
		// What it reads, it writes back the same (the Refs order is fixed).
		if again, ok := decodeFacts(encodeFacts(es)); !ok || len(again) != len(es) {
			t.Fatalf("re-encoding %d entries gave %d (%v)", len(es), len(again), ok)
		}
	})
}
