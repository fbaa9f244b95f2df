package paging

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ideate/git-ideate/internal/apperr"
)

// FuzzDecodeCursor feeds arbitrary text to DecodeCursor. It must never panic;
// a cursor it accepts must be exactly what EncodeCursor mints for the key it
// returned; a cursor it refuses must get a typed SCHEMA or CURSOR_MISMATCH
// error with one of the fixed sentences.
func FuzzDecodeCursor(f *testing.F) {
	seed := func(cursor, kind, filter string, keyLen int) {
		f.Add(cursor, kind, filter, keyLen)
	}
	valid := EncodeCursor("record", testFilter, []string{testULID})
	seed(valid, "record", testFilter, 1)
	seed(valid, "record", "scope=bar", 1)
	seed(valid, "work", testFilter, 1)
	seed(valid, "record", testFilter, 2)
	seed(valid+"=", "record", testFilter, 1)
	seed(valid+"AAAA", "record", testFilter, 1)
	seed(valid[:len(valid)-1], "record", testFilter, 1)
	seed(strings.ReplaceAll(valid, "J", "+"), "record", testFilter, 1)
	seed(EncodeCursor("work", "status=open\x00tenant=t1", []string{testTime, testULID}), "work", "status=open\x00tenant=t1", 2)
	seed(EncodeCursor("steering", "", []string{testTime, "st-1"}), "steering", "", 2)
	seed(EncodeCursor("record", testFilter, []string{""}), "record", testFilter, 1)
	seed(EncodeCursor("record", testFilter, []string{}), "record", testFilter, 0)
	seed(EncodeCursor("record", testFilter, []string{`<&>"\` + "😀\u2028"}), "record", testFilter, 1)
	seed(b64(`["`+testULID+`"]`), "record", testFilter, 1)
	seed(b64(recordPayload(validMembers+`,"x":1`)), "record", testFilter, 1)
	seed(b64(`{"v": 1,"k":"record","p":["`+testULID+`"],"f":"`+testFP+`"}`), "record", testFilter, 1)
	seed(b64(`{"v":1,"k":"\u0072ecord","p":["`+testULID+`"],"f":"`+testFP+`"}`), "record", testFilter, 1)
	seed(b64(`{"v":1,"k":"record","p":null,"f":"`+testFP+`"}`), "record", testFilter, 1)
	seed(b64("\x00\xff"), "record", testFilter, 1)
	seed("", "record", testFilter, 1)
	seed("!!!!", "record", testFilter, 1)
	seed(base64.URLEncoding.EncodeToString([]byte(`{}`)), "record", testFilter, 1)

	f.Fuzz(func(t *testing.T, cursor, kind, filter string, keyLen int) {
		key, err := DecodeCursor(cursor, kind, filter, keyLen)
		if err == nil {
			if len(key) != keyLen || keyLen < 1 {
				t.Fatalf("accepted a key of %d elements for wantKeyLen %d", len(key), keyLen)
			}
			for _, k := range key {
				if k == "" || !utf8.ValidString(k) {
					t.Fatalf("accepted a bad key element %q", k)
				}
			}
			if again := EncodeCursor(kind, filter, key); again != cursor {
				t.Fatalf("accepted cursor %q re-encodes to %q", cursor, again)
			}
			return
		}
		if key != nil {
			t.Fatalf("key %q returned with error %v", key, err)
		}
		var ae *apperr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("untyped error %v", err)
		}
		if ae.Code != apperr.Schema && ae.Code != apperr.CursorMismatch {
			t.Fatalf("unexpected code %s", ae.Code)
		}
		if (ae.Code == apperr.CursorMismatch) != (ae.Msg == msgCursorMismatch) {
			t.Fatalf("code %s carries sentence %q", ae.Code, ae.Msg)
		}
		if !cursorMessages[ae.Msg] {
			t.Fatalf("sentence %q is not one of the fixed cursor sentences", ae.Msg)
		}
	})
}

// FuzzCursorRoundTrip checks that any position EncodeCursor is given decodes
// back unchanged under its own filter and is refused under another.
func FuzzCursorRoundTrip(f *testing.F) {
	f.Add("record", testFilter, testULID, "")
	f.Add("work", "status=open\x00tenant=t1", testTime, testULID)
	f.Add("steering", "", testTime, "st-1")
	f.Add("record", "scope=😀", `<&>"\`+"\u2028", "")
	f.Fuzz(func(t *testing.T, kind, filter, k1, k2 string) {
		key := []string{k1}
		if k2 != "" {
			key = append(key, k2)
		}
		if k1 == "" || !utf8.ValidString(k1) || !utf8.ValidString(k2) || !utf8.ValidString(kind) {
			t.Skip("kind and key elements must be valid UTF-8, key elements non-empty")
		}
		c := EncodeCursor(kind, filter, key)
		if len(c) > maxCursorLen {
			t.Skip("position too long for a cursor")
		}
		got, err := DecodeCursor(c, kind, filter, len(key))
		if err != nil {
			t.Fatalf("DecodeCursor(EncodeCursor(...)): %v", err)
		}
		if !slices.Equal(got, key) {
			t.Fatalf("round trip gave %q, want %q", got, key)
		}
		if _, err := DecodeCursor(c, kind, filter+"\x00x", len(key)); !apperr.Is(err, apperr.CursorMismatch) {
			t.Fatalf("replay under another filter: %v, want CURSOR_MISMATCH", err)
		}
	})
}

// FuzzFit reads data as a list of little-endian int32 sizes and checks Fit
// against the definition: the longest prefix that fits, but at least one.
func FuzzFit(f *testing.F) {
	sizes := func(s ...int32) []byte {
		var b []byte
		for _, v := range s {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	f.Add(sizes(), int32(Budget))
	f.Add(sizes(10), int32(Budget))
	f.Add(sizes(Budget+1, 1), int32(Budget))
	f.Add(sizes(20000, 20000, 1), int32(Budget))
	f.Add(sizes(20000, 19999, 1), int32(Budget))
	f.Add(sizes(0, 0, 5), int32(0))
	f.Add(sizes(-7, 3), int32(3))
	f.Add(sizes(5, 5), int32(-1))
	f.Fuzz(func(t *testing.T, data []byte, budget32 int32) {
		var in []int
		for len(data) >= 4 {
			in = append(in, int(int32(binary.LittleEndian.Uint32(data))))
			data = data[4:]
		}
		budget := int(budget32)
		n := Fit(in, budget)

		if len(in) == 0 {
			if n != 0 {
				t.Fatalf("Fit(empty) = %d", n)
			}
			return
		}
		if n < 1 || n > len(in) {
			t.Fatalf("Fit = %d outside 1..%d", n, len(in))
		}
		// Sum in int64: int32 sizes cannot overflow it.
		var sum int64
		for _, s := range in[:n] {
			sum += int64(max(s, 0))
		}
		if n > 1 && sum > int64(budget) {
			t.Fatalf("Fit = %d keeps %d characters over budget %d", n, sum, budget)
		}
		// Maximal: the next item would not have fitted. (With n == 1 and
		// sum over budget, liveness alone kept the first item.)
		if n < len(in) && sum <= int64(budget) && sum+int64(max(in[n], 0)) <= int64(budget) {
			t.Fatalf("Fit = %d stopped although item %d fits", n, n)
		}
	})
}
