package record

import (
	"bytes"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDTime reads the instant of a ULID in either case; ValidID takes only
// the canonical upper-case form; anything else is no ULID.
func TestIDTime_AndValidID(t *testing.T) {
	const maxMs = 1<<48 - 1
	for _, c := range []struct {
		id    string
		ms    int64 // -1: not a ULID
		valid bool
	}{
		{"01ARZ3NDEKTSV4RRFFQ69G5FAV", 1469922850259, true},
		{"01arz3ndektsv4rrffq69g5fav", 1469922850259, false},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", maxMs, true},
		{"00000000000000000000000000", 0, true},
		{"81ARZ3NDEKTSV4RRFFQ69G5FAV", -1, false}, // past 128 bits
		{"01ARZ3NDEKTSV4RRFFQ69G5FAU", -1, false},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAI", -1, false},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAL", -1, false},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAO", -1, false},
		{"01ARZ3NDEKTSV4RRFFQ69G5FA", -1, false},
	} {
		got := IDTime(c.id)
		if c.ms < 0 && !got.IsZero() || c.ms >= 0 && !got.Equal(time.UnixMilli(c.ms)) {
			t.Errorf("IDTime(%s) = %v, want %d ms", c.id, got, c.ms)
		}
		if ValidID(c.id) != c.valid {
			t.Errorf("ValidID(%s) = %v", c.id, !c.valid)
		}
	}
}

// New draws the random part from its entropy for a new millisecond and
// increments it within one (by 1 here, to be predictable), moving to the
// next millisecond when all 80 bits are ones.
func TestIDSource_RandomPartAndCarry(t *testing.T) {
	at := time.UnixMilli(1764561600123)
	g := &IDSource{entropy: ulid.Monotonic(bytes.NewReader([]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), 1)}
	if got := g.New(at); got != "01KBC12FKVVTPVXVR14D2PF2DB" {
		t.Fatalf("first id = %s", got)
	}
	if got := g.New(at); got != "01KBC12FKVVTPVXVR14D2PF2DC" {
		t.Fatalf("same millisecond = %s", got)
	}
	next := at.Add(time.Millisecond)
	all := g.New(next)
	if !IDTime(all).Equal(next) || all[10:] != "ZZZZZZZZZZZZZZZZ" {
		t.Fatalf("next millisecond = %s", all)
	}
	carried := g.New(next)
	if !IDTime(carried).Equal(next.Add(time.Millisecond)) || carried[10:] != "0000000000000001" {
		t.Fatalf("after all ones = %s (%v)", carried, IDTime(carried))
	}
	// A clock that steps back mints after the last id, not before it.
	if back := g.New(at); back <= carried {
		t.Fatalf("a clock stepped back minted %s after %s", back, carried)
	}
}
