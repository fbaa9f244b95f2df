package record

import (
	"bytes"
	"testing"
	"time"
)

// The vectors were printed by github.com/oklog/ulid/v2 (v2.1.2), which
// minted and parsed the ids before this package did it itself: the same
// bytes give the same text, and the same text the same instant.
func TestULID_MatchesTheLibrary(t *testing.T) {
	for _, c := range []struct {
		ms   uint64
		ent  [10]byte
		want string
	}{
		{0, [10]byte{}, "00000000000000000000000000"},
		{1, [10]byte{9: 1}, "00000000010000000000000001"},
		{1764561600123, [10]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab}, "01KBC12FKVVTPVXVR14D2PF2DB"},
		{maxULIDTime, [10]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{93824992236885, [10]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, "2NANANANAN041061050R3GG28A"},
	} {
		var u ulid
		if !u.setTime(c.ms) {
			t.Fatalf("setTime(%d) refused", c.ms)
		}
		copy(u[6:], c.ent[:])
		if got := u.String(); got != c.want {
			t.Errorf("ulid(%d, %x) = %s, want %s", c.ms, c.ent, got, c.want)
		}
		if u.time() != c.ms {
			t.Errorf("time() = %d, want %d", u.time(), c.ms)
		}
		if got := IDTime(c.want); !got.Equal(time.UnixMilli(int64(c.ms))) {
			t.Errorf("IDTime(%s) = %v, want %d ms", c.want, got, c.ms)
		}
	}
	var u ulid
	if u.setTime(maxULIDTime+1) || u != (ulid{}) {
		t.Errorf("setTime past 48 bits changed the id: %x", u)
	}
	for _, c := range []struct {
		id string
		ms int64 // -1: not a ULID
	}{
		{"01ARZ3NDEKTSV4RRFFQ69G5FAV", 1469922850259},
		{"01arz3ndektsv4rrffq69g5fav", 1469922850259},
		{"7ZZZZZZZZZZZZZZZZZZZZZZZZZ", maxULIDTime},
		{"81ARZ3NDEKTSV4RRFFQ69G5FAV", -1}, // past 128 bits
		{"01ARZ3NDEKTSV4RRFFQ69G5FAU", -1},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAI", -1},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAL", -1},
		{"01ARZ3NDEKTSV4RRFFQ69G5FAO", -1},
		{"01ARZ3NDEKTSV4RRFFQ69G5FA", -1},
	} {
		got := IDTime(c.id)
		if c.ms < 0 && !got.IsZero() || c.ms >= 0 && !got.Equal(time.UnixMilli(c.ms)) {
			t.Errorf("IDTime(%s) = %v, want %d ms", c.id, got, c.ms)
		}
	}
}

// New draws the random part from its entropy for a new millisecond and
// increments it within one, carrying into the timestamp when all 80 bits
// are ones.
func TestIDSource_RandomPartAndCarry(t *testing.T) {
	at := time.UnixMilli(1764561600123)
	g := &IDSource{entropy: bytes.NewReader([]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})}
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
	if !IDTime(carried).Equal(next.Add(time.Millisecond)) || carried[10:] != "0000000000000000" {
		t.Fatalf("after all ones = %s (%v)", carried, IDTime(carried))
	}
}
